import { Ajv } from 'ajv';

/**
 * One event as capture publishes it and ingest consumes it. `data` is the event as the client
 * sent it (after decoding and token/uuid/distinct id normalisation), kept as JSON text so ingest
 * applies every rule to the original payload.
 *
 * A Kafka message on the event topics carries one or more of these, each encoded alone, one per
 * line (see `joinCaptureMessages`): JSON text never holds a raw newline, so a message of one
 * event is exactly the one-event format that came before, which the api still publishes.
 */
export interface CaptureMessage {
  uuid: string;
  distinct_id: string;
  ip: string | null;
  /** JSON text of the raw event object. */
  data: string;
  /** Capture's receive time, ISO 8601. */
  now: string;
  /** When the client says it sent the request, ISO 8601, if it said so. */
  sent_at: string | null;
  token: string;
  historical_migration: boolean;
}

const schema = {
  type: 'object',
  required: ['uuid', 'distinct_id', 'ip', 'data', 'now', 'sent_at', 'token', 'historical_migration'],
  properties: {
    uuid: { type: 'string', minLength: 1 },
    distinct_id: { type: 'string', minLength: 1 },
    ip: { type: 'string', nullable: true },
    data: { type: 'string' },
    now: { type: 'string', minLength: 1 },
    sent_at: { type: 'string', nullable: true },
    token: { type: 'string', minLength: 1 },
    historical_migration: { type: 'boolean' },
  },
} as const;

const ajv = new Ajv();
const validateCaptureMessage = ajv.compile<CaptureMessage>(schema);

export type DecodeResult = { ok: true; message: CaptureMessage } | { ok: false; reason: string };

/** Parses a message value from the event topics; never throws, so a bad message can be dead-lettered. */
export function decodeCaptureMessage(value: Buffer | string | null): DecodeResult {
  if (value === null) return { ok: false, reason: 'empty message value' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString());
  } catch (error) {
    return { ok: false, reason: `message is not JSON: ${(error as Error).message}` };
  }
  if (!validateCaptureMessage(parsed)) {
    return { ok: false, reason: `message does not match the capture schema: ${ajv.errorsText(validateCaptureMessage.errors)}` };
  }
  return { ok: true, message: parsed };
}

export function encodeCaptureMessage(message: CaptureMessage): string {
  return JSON.stringify(message);
}

const NEWLINE = 0x0a;

/**
 * The most bytes of events capture puts in one Kafka message: under the broker's default
 * `message.max.bytes` (1 MB), and about one ingest chunk of typical events. An event larger than
 * this travels alone, as it did when every event had a message of its own.
 */
export const MAX_EVENTS_MESSAGE_BYTES = 1_000_000;

/**
 * Joins encoded events (`encodeCaptureMessage`) into message values, in order, one event per
 * line, starting a new value before one would pass `maxBytes`.
 */
export function joinCaptureMessages(encoded: readonly string[], maxBytes = MAX_EVENTS_MESSAGE_BYTES): string[] {
  const values: string[] = [];
  let lines: string[] = [];
  let bytes = 0;
  for (const line of encoded) {
    const size = Buffer.byteLength(line) + 1;
    if (lines.length > 0 && bytes + size > maxBytes) {
      values.push(lines.join('\n'));
      lines = [];
      bytes = 0;
    }
    lines.push(line);
    bytes += size;
  }
  if (lines.length > 0) values.push(lines.join('\n'));
  return values;
}

/**
 * The encoded events of a message value, each to be decoded on its own so that a bad one is
 * dead-lettered alone. Slices share the value's memory; a one-event value comes back as itself.
 */
export function splitCaptureMessages(value: Buffer | null): (Buffer | null)[] {
  if (value === null) return [null];
  let end = value.indexOf(NEWLINE);
  if (end === -1) return [value];
  const lines: Buffer[] = [];
  let start = 0;
  while (end !== -1) {
    if (end > start) lines.push(value.subarray(start, end));
    start = end + 1;
    end = value.indexOf(NEWLINE, start);
  }
  if (start < value.length) lines.push(value.subarray(start));
  // A value of nothing but newlines is still a message to dead-letter, not zero events.
  return lines.length > 0 ? lines : [value];
}

/** How many events a message value carries, without decoding them (ingest sizes its chunks by it). */
export function eventsInMessage(value: Buffer | null): number {
  if (value === null) return 1;
  let events = 1;
  for (let at = value.indexOf(NEWLINE); at !== -1; at = value.indexOf(NEWLINE, at + 1)) events += 1;
  return events;
}
