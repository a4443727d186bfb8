import { BATCH_ENVELOPE_SCHEMA, CAPTURE_EVENT_SCHEMA, CAPTURE_PATHS, eventUuid, parseCaptureRequest } from '@tributary/payload';
import type { CaptureMessage } from '@tributary/kafka';
import type { TokenResolver } from '@tributary/control-plane';
import { badRequest, serviceUnavailable, unauthorized, type DirectRequest, type DirectRoute, type OperationDoc } from '@tributary/http';
import type { Logger } from '@tributary/logger';
import { answeredByCors, decodeSdkPayload, readSdkBody, sdkQuery } from '@tributary/sdk-edge';
import type { CaptureMetrics } from './capture-metrics.js';
import { PublishError, type EventPublisher } from './event-publisher.js';

export interface CaptureDeps {
  tokens: Pick<TokenResolver, 'resolve'>;
  publisher: Pick<EventPublisher, 'publish'>;
  logger: Logger;
  maxBatchBytes: number;
  maxEventBytes: number;
  clock?: () => Date;
  metrics?: CaptureMetrics;
}

/** Bodies may also come gzip- or lz64-compressed, or form-encoded as `data=`; the schema is of what they decode to. */
const CAPTURE_DOC: OperationDoc = {
  summary: 'Capture one event, an array of events, or a batch',
  tags: ['capture'],
  projectKey: true,
  description:
    'Answers `{"status": 1}` once Kafka has acknowledged the events, also when events without a name or distinct id were dropped; ' +
    '503 when the event log cannot take them (retry: events carry uuids, so a retry never counts twice). ' +
    '`historical_migration: true` on a batch sends it, in order, to the historical topic.',
  body: { oneOf: [CAPTURE_EVENT_SCHEMA, BATCH_ENVELOPE_SCHEMA, { type: 'array', items: CAPTURE_EVENT_SCHEMA }] },
  bodyTypes: ['application/json', 'text/plain', 'application/x-www-form-urlencoded'],
  responses: { 200: { description: 'Accepted.', schema: { type: 'object', properties: { status: { const: 1 } } } } },
};

const ACCEPTED = Buffer.from(JSON.stringify({ status: 1 }));

/**
 * Every capture path, served by plain node:http ahead of Express (direct routes): a request is
 * mostly its events' work, and Express's router and response helpers cost a single-event request
 * more than that work does.
 */
export function captureRoutes(deps: CaptureDeps): DirectRoute[] {
  const clock = deps.clock ?? (() => new Date());

  const capture = async (request: DirectRequest) => {
    const { req, res, path } = request;
    if (answeredByCors(req, res)) return;
    const limit = path.startsWith('/batch') ? deps.maxBatchBytes : deps.maxEventBytes;
    const query = sdkQuery(request.query);
    const decoded = decodeSdkPayload(request, await readSdkBody(request, limit), query, limit);
    const now = clock();
    const parsed = parseCaptureRequest(decoded.value, { query, newUuid: eventUuid, text: decoded.text });
    if (!parsed.ok) {
      throw parsed.status === 401 ? unauthorized(parsed.detail, parsed.code) : badRequest(parsed.detail, null, parsed.code);
    }
    const project = await deps.tokens.resolve(parsed.token);
    if (!project) {
      deps.metrics?.dropped('invalid_api_key', parsed.events.length + parsed.dropped.length);
      throw unauthorized('Project API key is invalid: no project has this key.', 'invalid_api_key');
    }

    const ip = request.ip() ?? null;
    const receivedAt = now.toISOString();
    const sentAt = parsed.sentAt ? parsed.sentAt.toISOString() : null;
    const messages: CaptureMessage[] = parsed.events.map((event) => ({
      uuid: event.uuid,
      distinct_id: event.distinctId,
      ip,
      data: event.data,
      now: receivedAt,
      sent_at: sentAt,
      token: parsed.token,
      historical_migration: parsed.historicalMigration,
    }));
    try {
      await deps.publisher.publish(messages);
    } catch (error) {
      if (error instanceof PublishError) {
        deps.metrics?.dropped('kafka_unavailable', messages.length);
        deps.logger.error({ err: error, events: messages.length }, 'events not acknowledged by Kafka');
        throw serviceUnavailable('The event log cannot take events right now; nothing was accepted, retry later.');
      }
      throw error;
    }
    deps.metrics?.accepted(messages.length, parsed.historicalMigration);
    for (const { reason } of parsed.dropped) deps.metrics?.dropped(reason, 1);
    if (parsed.dropped.length > 0) deps.logger.debug({ dropped: parsed.dropped }, 'events dropped at capture');
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('content-length', ACCEPTED.length);
    res.end(ACCEPTED);
  };
  // Events come as POST, or as GET with `?data=`; any other method is a 405 from the runtime.
  return [{ paths: CAPTURE_PATHS, methods: ['GET', 'POST', 'OPTIONS'], handle: capture, doc: CAPTURE_DOC }];
}
