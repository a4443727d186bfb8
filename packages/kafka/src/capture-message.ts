import { Ajv } from 'ajv';
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { messageKey } from './topics.js';

/**
 * One event as capture publishes it and ingest consumes it. `data` is the event's JSON text as
 * the client sent it (after decoding; serialised again only when that text holds a tab or a
 * newline), so ingest applies every rule to the original payload. Its uuid and distinct id may
 * be missing or unnormalised there: ingest takes them from this message's own fields.
 *
 * A message on the event topics carries one event or several:
 *
 * - one event: this object as JSON (`encodeCaptureMessage`). The api publishes this, capture did
 *   until it batched, and dead letters carry it;
 * - several events (`encodeCaptureEvents`), which capture publishes for the events of one request
 *   bound for one partition: a first line of the fields they share, then one line per event of
 *   its own fields and, after a tab, its `data` as it is:
 *
 *   ```
 *   {"token":"phc_…","now":"…","sent_at":null,"ip":"…","historical_migration":false}
 *   {"uuid":"…","distinct_id":"…"}<TAB>{"event":"$pageview","properties":{…},…}
 *   ```
 *
 *   The data is not JSON text inside JSON, which would escape every quote in it: the message is
 *   about a third smaller, and cheaper to write and to read. JSON text never holds a raw newline
 *   or tab, so a value with a newline is the several-event form, and a line's first tab ends its
 *   own fields.
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

/** What the events of a several-event message share: its first line. */
type SharedFields = Pick<CaptureMessage, 'token' | 'now' | 'sent_at' | 'ip' | 'historical_migration'>;
/** An event's own fields besides its data: the start of its line. */
type OwnFields = Pick<CaptureMessage, 'uuid' | 'distinct_id'>;

const FIELD_SCHEMAS = {
  uuid: { type: 'string', minLength: 1 },
  distinct_id: { type: 'string', minLength: 1 },
  ip: { type: 'string', nullable: true },
  data: { type: 'string' },
  now: { type: 'string', minLength: 1 },
  sent_at: { type: 'string', nullable: true },
  token: { type: 'string', minLength: 1 },
  historical_migration: { type: 'boolean' },
} as const;

const objectOf = <K extends keyof typeof FIELD_SCHEMAS>(fields: readonly K[]) => ({
  type: 'object',
  required: fields,
  properties: Object.fromEntries(fields.map((field) => [field, FIELD_SCHEMAS[field]])),
});

const ajv = new Ajv();
const validateCaptureMessage = ajv.compile<CaptureMessage>(objectOf(['uuid', 'distinct_id', 'ip', 'data', 'now', 'sent_at', 'token', 'historical_migration']));
const validateShared = ajv.compile<SharedFields>(objectOf(['token', 'now', 'sent_at', 'ip', 'historical_migration']));
const validateOwn = ajv.compile<OwnFields>(objectOf(['uuid', 'distinct_id']));

export type DecodeResult = { ok: true; message: CaptureMessage } | { ok: false; reason: string };

function parseJson(text: string, what: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: `${what} is not JSON: ${(error as Error).message}` };
  }
}

/** Parses a one-event message value; never throws, so a bad message can be dead-lettered. */
export function decodeCaptureMessage(value: Buffer | string | null): DecodeResult {
  if (value === null) return { ok: false, reason: 'empty message value' };
  const parsed = parseJson(value.toString(), 'message');
  if (!parsed.ok) return parsed;
  if (!validateCaptureMessage(parsed.value)) {
    return { ok: false, reason: `message does not match the capture schema: ${ajv.errorsText(validateCaptureMessage.errors)}` };
  }
  return { ok: true, message: parsed.value };
}

export function encodeCaptureMessage(message: CaptureMessage): string {
  return JSON.stringify(message);
}

const NEWLINE = 0x0a;
const TAB = 0x09;

/**
 * The most bytes of events capture puts in one Kafka message: under the broker's default
 * `message.max.bytes` (1 MB), and about one ingest chunk of typical events. An event larger than
 * this travels alone, as it did when every event had a message of its own.
 */
export const MAX_EVENTS_MESSAGE_BYTES = 1_000_000;

const sharedLine = (m: CaptureMessage) =>
  JSON.stringify({ token: m.token, now: m.now, sent_at: m.sent_at, ip: m.ip, historical_migration: m.historical_migration } satisfies SharedFields);

const sameShared = (a: CaptureMessage, b: CaptureMessage) =>
  a.token === b.token && a.now === b.now && a.sent_at === b.sent_at && a.ip === b.ip && a.historical_migration === b.historical_migration;

/**
 * Encodes events in the several-event form, in order, into as few message values as fit in
 * `maxBytes` each. Events that share token, times, address and flag (those of one request) share
 * a value; a new one starts where they differ.
 */
export function encodeCaptureEvents(events: readonly CaptureMessage[], maxBytes = MAX_EVENTS_MESSAGE_BYTES): string[] {
  const values: string[] = [];
  let lines: string[] = [];
  let first: CaptureMessage | undefined;
  // A UTF-16 unit takes at most 3 bytes in UTF-8. `bytes` counts the value's first `counted` lines
  // exactly and bounds the others by that, newlines included: a value far below the limit, as
  // nearly every request's is, is never measured, and a line is measured at most once.
  let bytes = 0;
  let counted = 0;
  for (const event of events) {
    const line = `${JSON.stringify({ uuid: event.uuid, distinct_id: event.distinct_id } satisfies OwnFields)}\t${event.data}`;
    let joins = first !== undefined && sameShared(first, event);
    if (joins) {
      lines.push(line);
      bytes += line.length * 3 + 1;
      if (bytes > maxBytes) {
        for (; counted < lines.length; counted += 1) bytes -= lines[counted]!.length * 3 - Buffer.byteLength(lines[counted]!);
        if (bytes > maxBytes) {
          lines.pop();
          joins = false;
        }
      }
    }
    if (!joins) {
      if (first) values.push(lines.join('\n'));
      first = event;
      lines = [sharedLine(event), line];
      bytes = (lines[0]!.length + line.length) * 3 + 1;
      counted = 0;
    }
  }
  if (first) values.push(lines.join('\n'));
  return values;
}

/** How many events a message value carries, without decoding them (ingest sizes its chunks by it). */
export function eventsInMessage(value: Buffer | null): number {
  if (value === null) return 1;
  let newlines = 0;
  for (let at = value.indexOf(NEWLINE); at !== -1; at = value.indexOf(NEWLINE, at + 1)) newlines += 1;
  return Math.max(1, newlines);
}

/** One event of a message: decoded, and standing as a message of its own for a dead letter. */
export interface MessageEvent {
  decoded: DecodeResult;
  message: KafkaMessage;
}

/**
 * An event of a several-event message as a one-event message of its own, with its source's
 * offset: its key and value are built only when read, which only a dead letter does. It keeps
 * the line's bytes rather than the decoded event, whose text would otherwise stay on the heap
 * for as long as ingest holds the message: the whole chunk.
 */
class OneEventMessage {
  readonly timestamp: string;
  readonly attributes: number;
  readonly offset: string;
  readonly headers: IHeaders;

  /**
   * The line is `source[start..end]`, kept as positions in the bytes every event of the message
   * shares rather than as a view of its own (an object per event, as large as the rest of this).
   */
  constructor(
    message: KafkaMessage,
    private readonly source: Buffer,
    private readonly start: number,
    private readonly end: number,
    private readonly shared: SharedFields,
  ) {
    this.timestamp = message.timestamp;
    this.attributes = message.attributes;
    this.offset = message.offset;
    this.headers = message.headers ?? {};
  }

  private get line(): Buffer {
    return this.source.subarray(this.start, this.end);
  }

  get key(): Buffer | null {
    const decoded = decodeEventLine(this.line, this.shared);
    return decoded.ok ? Buffer.from(messageKey(decoded.message.token, decoded.message.distinct_id)) : null;
  }

  /** The one-event form when the event can be read; else its line as it came. */
  get value(): Buffer {
    const decoded = decodeEventLine(this.line, this.shared);
    return decoded.ok ? Buffer.from(encodeCaptureMessage(decoded.message)) : this.line;
  }
}

function decodeEventLine(line: Buffer, shared: SharedFields): DecodeResult {
  const tab = line.indexOf(TAB);
  if (tab === -1) return { ok: false, reason: 'event line has no tab between its fields and its data' };
  const own = parseJson(line.toString('utf8', 0, tab), 'event fields');
  if (!own.ok) return own;
  if (!validateOwn(own.value)) return { ok: false, reason: `event fields do not match the capture schema: ${ajv.errorsText(validateOwn.errors)}` };
  return { ok: true, message: { uuid: own.value.uuid, distinct_id: own.value.distinct_id, ip: shared.ip, data: line.toString('utf8', tab + 1), now: shared.now, sent_at: shared.sent_at, token: shared.token, historical_migration: shared.historical_migration } };
}

/**
 * The events of a message from the event topics, in order, in either form. Each is decoded on its
 * own, so that a bad one is dead-lettered alone; a several-event message whose first line cannot
 * be read is one bad event, as nothing in it can be trusted. Never throws.
 */
export function decodeMessageEvents(message: KafkaMessage): MessageEvent[] {
  const value = message.value;
  const firstEnd = value === null ? -1 : value.indexOf(NEWLINE);
  if (value === null || firstEnd === -1) return [{ decoded: decodeCaptureMessage(value), message }];
  const sharedText = parseJson(value.toString('utf8', 0, firstEnd), 'first line of a several-event message');
  if (!sharedText.ok) return [{ decoded: sharedText, message }];
  const shared = sharedText.value;
  if (!validateShared(shared)) {
    return [{ decoded: { ok: false, reason: `first line of a several-event message does not match the capture schema: ${ajv.errorsText(validateShared.errors)}` }, message }];
  }
  const events: MessageEvent[] = [];
  for (let start = firstEnd + 1; start < value.length; ) {
    let end = value.indexOf(NEWLINE, start);
    if (end === -1) end = value.length;
    const decoded = decodeEventLine(value.subarray(start, end), shared);
    events.push({ decoded, message: new OneEventMessage(message, value, start, end, shared) });
    start = end + 1;
  }
  return events;
}
