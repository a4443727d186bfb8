import { Ajv } from 'ajv';
import { extractDistinctId } from './distinct-id.js';
import { eventUuid } from './event-uuid.js';
import { eventTexts, type PayloadShape } from './event-texts.js';
import { checkToken } from './token.js';

/**
 * One event ready for Kafka: its uuid, distinct id and the event as JSON text for ingest, which
 * takes uuid and distinct id from the message rather than from that text.
 */
export interface NormalisedEvent {
  uuid: string;
  distinctId: string;
  data: string;
}

export interface DroppedEvent {
  index: number;
  reason: 'missing_event_name' | 'missing_distinct_id';
}

export type ParseResult =
  | { ok: true; token: string; historicalMigration: boolean; sentAt: Date | null; events: NormalisedEvent[]; dropped: DroppedEvent[] }
  | { ok: false; status: 400 | 401; code: string; detail: string };

export interface ParseOptions {
  query: Record<string, string | undefined>;
  newUuid?: () => string;
  /**
   * The JSON text the value was parsed from: each event's data is then its own text in it, where
   * that can stand in a Kafka message, rather than the event serialised again.
   */
  text?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN_FIELDS = ['api_key', 'token', '$token'] as const;

const ajv = new Ajv({ allErrors: false, allowUnionTypes: true });
/** The shapes the edge accepts: events are objects; a batch envelope has an array `batch`. */
export const CAPTURE_EVENT_SCHEMA = {
  type: 'object',
  properties: {
    event: {},
    properties: { type: ['object', 'null'] },
    timestamp: { type: ['string', 'number', 'null'] },
    offset: { type: ['number', 'null'] },
    uuid: { type: ['string', 'null'] },
    $set: { type: ['object', 'null'] },
    $set_once: { type: ['object', 'null'] },
  },
} as const;
export const BATCH_ENVELOPE_SCHEMA = {
  type: 'object',
  required: ['batch'],
  properties: {
    batch: { type: 'array' },
    historical_migration: { type: ['boolean', 'null'] },
    sent_at: { type: ['string', 'null'] },
  },
} as const;
const validateEvent = ajv.compile<Record<string, unknown>>(CAPTURE_EVENT_SCHEMA);
const validateEnvelope = ajv.compile<{ batch: unknown[]; historical_migration?: boolean; sent_at?: string }>(BATCH_ENVELOPE_SCHEMA);

const bad = (status: 400 | 401, code: string, detail: string): ParseResult => ({ ok: false, status, code, detail });

function tokenOf(event: Record<string, unknown>): unknown {
  for (const field of TOKEN_FIELDS) if (event[field] !== undefined && event[field] !== null) return event[field];
  return (event.properties as Record<string, unknown> | null | undefined)?.token ?? undefined;
}

function parseSentAt(bodySentAt: unknown, query: Record<string, string | undefined>): Date | null {
  if (typeof bodySentAt === 'string') {
    const date = new Date(bodySentAt);
    if (!Number.isNaN(date.getTime())) return date;
  }
  const ms = query._ ?? query.sent_at;
  if (ms === undefined || !/^\d+$/.test(ms)) return null;
  // Digits past the range of a date (year 275760) are no time at all, as unparseable text is not.
  const date = new Date(Number(ms));
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * Whether the text holds a raw tab or newline, which separate the fields and the events of a
 * several-event Kafka message (see `encodeCaptureEvents`), or a carriage return. `JSON.stringify`
 * never writes them, but a pretty-printed body has them between tokens. Three searches for a
 * character cost a tenth of what one regular expression does over a typical event.
 */
const holdsSeparator = (text: string) => text.includes('\n') || text.includes('\t') || text.includes('\r');

/**
 * The event as JSON text for ingest: its text as the client sent it, when there is one that holds
 * no message separator, which saves serialising the event; else the event serialised, with its
 * uuid and distinct id written into it.
 */
function eventData(raw: Record<string, unknown>, source: string | undefined, uuid: string, distinctId: string): string {
  if (source !== undefined && !holdsSeparator(source)) return source;
  // Assigning in place keeps the key order a spread into a copy would give, without the copy:
  // the event is this request's own parsed object.
  raw.uuid = uuid;
  raw.distinct_id = distinctId;
  return JSON.stringify(raw);
}

/**
 * Reads a decoded capture payload: an array of events, a `{api_key|token, batch, ...}`
 * envelope, or a single event, in that order. The envelope's key wins over the events' keys;
 * two different keys in one request is a 401. Events without a name or distinct id are dropped.
 */
export function parseCaptureRequest(value: unknown, options: ParseOptions): ParseResult {
  const newUuid = options.newUuid ?? eventUuid;
  let rawEvents: unknown[];
  let shape: PayloadShape;
  let envelopeToken: unknown;
  let historicalMigration = false;
  let bodySentAt: unknown;
  if (Array.isArray(value)) {
    rawEvents = value;
    shape = 'array';
  } else if (value !== null && typeof value === 'object' && 'batch' in value) {
    if (!validateEnvelope(value)) return bad(400, 'invalid_payload', `Batch envelope is malformed: ${ajv.errorsText(validateEnvelope.errors)}.`);
    rawEvents = value.batch;
    shape = 'batch';
    envelopeToken = tokenOf(value as Record<string, unknown>);
    historicalMigration = value.historical_migration === true;
    bodySentAt = value.sent_at;
  } else if (value !== null && typeof value === 'object') {
    rawEvents = [value];
    shape = 'event';
  } else {
    return bad(400, 'invalid_payload', 'Payload must be an event object, an array of events or a {api_key, batch} object.');
  }
  if (rawEvents.length === 0) return bad(400, 'empty_batch', 'Batch has no events.');
  const sources = options.text === undefined ? null : eventTexts(options.text, shape, rawEvents.length);

  const tokens = new Set<string>();
  const events: NormalisedEvent[] = [];
  const dropped: DroppedEvent[] = [];
  for (const [index, raw] of rawEvents.entries()) {
    if (!validateEvent(raw)) {
      return bad(400, 'invalid_event', `Event ${index} is malformed: ${ajv.errorsText(validateEvent.errors, { dataVar: 'event' })}.`);
    }
    const ownToken = envelopeToken === undefined ? tokenOf(raw) : undefined;
    if (ownToken !== undefined) {
      const checked = checkToken(ownToken);
      if (!checked.ok) return bad(401, 'invalid_api_key', checked.detail);
      tokens.add(checked.token);
    }
    if (typeof raw.event !== 'string' || raw.event.length === 0) {
      dropped.push({ index, reason: 'missing_event_name' });
      continue;
    }
    const distinctId = extractDistinctId(raw);
    if (distinctId === null) {
      dropped.push({ index, reason: 'missing_distinct_id' });
      continue;
    }
    let uuid: string;
    if (raw.uuid === undefined || raw.uuid === null || raw.uuid === '') uuid = newUuid();
    else if (UUID.test(raw.uuid as string)) uuid = (raw.uuid as string).toLowerCase();
    else return bad(400, 'invalid_uuid', `Event ${index} has a malformed uuid: ${JSON.stringify(raw.uuid)}.`);
    events.push({ uuid, distinctId, data: eventData(raw, sources?.[index], uuid, distinctId) });
  }

  let token: string;
  if (envelopeToken !== undefined) {
    const checked = checkToken(envelopeToken);
    if (!checked.ok) return bad(401, 'invalid_api_key', checked.detail);
    token = checked.token;
  } else {
    if (tokens.size > 1) return bad(401, 'invalid_api_key', 'Request carries more than one project API key; send one project per request.');
    const [only] = tokens;
    if (only === undefined) return bad(401, 'invalid_api_key', 'Project API key is missing: send it as api_key (or token) in the body.');
    token = only;
  }
  return { ok: true, token, historicalMigration, sentAt: parseSentAt(bodySentAt, options.query), events, dropped };
}
