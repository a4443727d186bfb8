import { Router, type Request, type RequestHandler } from 'express';
import cors from 'cors';
import getRawBody from 'raw-body';
import { v7 as uuidv7 } from 'uuid';
import { BATCH_ENVELOPE_SCHEMA, CAPTURE_EVENT_SCHEMA, CAPTURE_PATHS, decodeBody, parseCaptureRequest } from '@tributary/payload';
import type { CaptureMessage } from '@tributary/kafka';
import type { TokenResolver } from '@tributary/control-plane';
import { badRequest, documented, jsonProblem, payloadTooLarge, serviceUnavailable, unauthorized } from '@tributary/http';
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
async function readBody(req: Request, limit: number): Promise<Buffer> {
  try {
    return await getRawBody(req, { limit });
  } catch (error) {
    const { type } = error as { type?: string };
    if (type === 'entity.too.large') throw payloadTooLarge(`Request body is larger than the limit of ${limit} bytes for ${req.path}.`);
    if (type === 'request.aborted') throw badRequest('Request was aborted by the client.', null, 'aborted');
    throw error;
  }
}

function queryStrings(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(req.query)) {
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

/** Bodies may also come gzip- or lz64-compressed, or form-encoded as `data=`; the schema is of what they decode to. */
const CAPTURE_DOC = {
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

export function captureRoutes(deps: CaptureDeps): Router {
  const router = Router();
  const clock = deps.clock ?? (() => new Date());
  // Browsers send events cross-origin with credentials, so the origin is reflected rather than `*`.
  const corsMiddleware = cors({ origin: true, credentials: true, maxAge: 86_400 });
  router.options([...CAPTURE_PATHS], corsMiddleware);

  const capture: RequestHandler = async (req, res) => {
    const limit = req.path.startsWith('/batch') ? deps.maxBatchBytes : deps.maxEventBytes;
    const query = queryStrings(req);
    const body = req.method === 'POST' ? await readBody(req, limit) : Buffer.alloc(0);
    const decoded = decodeBody(
      { body, contentType: req.get('content-type'), contentEncoding: req.get('content-encoding'), query },
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
    const parsed = parseCaptureRequest(decoded.value, { query, newUuid: uuidv7 });
    if (!parsed.ok) {
      throw parsed.status === 401 ? unauthorized(parsed.detail, parsed.code) : badRequest(parsed.detail, null, parsed.code);
    }
    const project = await deps.tokens.resolve(parsed.token);
    if (!project) {
      deps.metrics?.dropped('invalid_api_key', parsed.events.length + parsed.dropped.length);
      throw unauthorized('Project API key is invalid: no project has this key.', 'invalid_api_key');
    }

    const ip = req.ip ?? null;
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
    res.json({ status: 1 });
  };
  // Events come as POST, or as GET with `?data=`; any other method is a 405 from the runtime.
  router.get([...CAPTURE_PATHS], corsMiddleware, documented(CAPTURE_DOC), capture);
  router.post([...CAPTURE_PATHS], corsMiddleware, documented(CAPTURE_DOC), capture);
  return router;
}
