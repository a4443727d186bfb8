import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import getRawBody from 'raw-body';
import { BATCH_ENVELOPE_SCHEMA, CAPTURE_EVENT_SCHEMA, CAPTURE_PATHS, decodeBody, eventUuid, parseCaptureRequest } from '@tributary/payload';
import type { CaptureMessage } from '@tributary/kafka';
import type { TokenResolver } from '@tributary/control-plane';
import { badRequest, jsonProblem, payloadTooLarge, serviceUnavailable, unauthorized, type DirectRequest, type DirectRoute, type OperationDoc } from '@tributary/http';
import type { Logger } from '@tributary/logger';
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

/** Reads the body while it streams, stopping at the limit instead of buffering all of it. */
async function readBody(req: IncomingMessage, path: string, limit: number): Promise<Buffer> {
  try {
    return await getRawBody(req, { limit });
  } catch (error) {
    const { type } = error as { type?: string };
    if (type === 'entity.too.large') throw payloadTooLarge(`Request body is larger than the limit of ${limit} bytes for ${path}.`);
    if (type === 'request.aborted') throw badRequest('Request was aborted by the client.', null, 'aborted');
    throw error;
  }
}

function queryStrings({ query }: DirectRequest): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(query)) {
    if (typeof value === 'string') out[key] = value;
  }
  return out;
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

// Browsers send events cross-origin with credentials, so the origin is reflected rather than `*`.
const corsMiddleware = cors({ origin: true, credentials: true, maxAge: 86_400 });

/** Sets the CORS headers browsers need on any origin; true when that answered the request (a preflight). */
function answeredByCors(req: IncomingMessage, res: ServerResponse): boolean {
  let passedOn = false;
  corsMiddleware(req, res, () => {
    passedOn = true;
  });
  return !passedOn;
}

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
    const query = queryStrings(request);
    const body = request.method === 'POST' ? await readBody(req, path, limit) : Buffer.alloc(0);
    const decoded = decodeBody(
      { body, contentType: req.headers['content-type'], contentEncoding: req.headers['content-encoding'], query },
      { maxBytes: limit },
    );
    if (!decoded.ok) {
      if (decoded.error.kind === 'too_large') throw payloadTooLarge(decoded.error.detail);
      throw badRequest(decoded.error.detail, null, decoded.error.kind);
    }
    // Ingest writes properties to Postgres, whose jsonb parser would overflow its stack on them.
    const nested = jsonProblem(decoded.value);
    if (nested) throw badRequest(nested.detail, nested.attr, 'invalid_payload');
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
