import { createHash } from 'node:crypto';

/** One event as `/batch/` takes it, from a line of PostHog's export shape. */
export interface ImportEvent {
  event: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  timestamp?: string;
  uuid: string;
}

export type RecordResult = { ok: true; event: ImportEvent } | { ok: false; reason: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A stable uuid for an event exported without one, from its content and its place in the file:
 * a resumed or repeated import sends it under the same uuid, so ClickHouse keeps one copy.
 * Formatted as a version-8 (custom) UUID.
 */
export function derivedUuid(source: string, index: number): string {
  const hex = createHash('sha256').update(`${index}\u0000${source}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Checks one exported event: `event` and `distinct_id` are required (capture would drop the event
 * without them, so the import says so instead), `properties` an object, `timestamp` a date,
 * `uuid` a UUID. `source` is the record's text, for the uuid of an event that has none.
 */
export function toImportEvent(value: unknown, index: number, source: string): RecordResult {
  if (!isObject(value)) return { ok: false, reason: 'is not a JSON object' };
  const { event, distinct_id: distinctId, properties, timestamp, uuid } = value;
  if (typeof event !== 'string' || event === '') return { ok: false, reason: '`event` must be a non-empty string' };
  if ((typeof distinctId !== 'string' && typeof distinctId !== 'number') || distinctId === '') return { ok: false, reason: '`distinct_id` must be a non-empty string or number' };
  if (properties !== undefined && properties !== null && !isObject(properties)) return { ok: false, reason: '`properties` must be an object' };
  if (timestamp !== undefined && timestamp !== null && (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp)))) {
    return { ok: false, reason: '`timestamp` must be an ISO 8601 date' };
  }
  if (uuid !== undefined && uuid !== null && (typeof uuid !== 'string' || !UUID.test(uuid))) return { ok: false, reason: '`uuid` must be a UUID' };
  return {
    ok: true,
    event: {
      event,
      distinct_id: String(distinctId),
      properties: isObject(properties) ? properties : {},
      ...(typeof timestamp === 'string' ? { timestamp } : {}),
      uuid: typeof uuid === 'string' ? uuid.toLowerCase() : derivedUuid(source, index),
    },
  };
}

/**
 * A CSV row as an exported event: the columns `event`, `distinct_id`, `timestamp`, `uuid`, and
 * `properties` holding JSON; any other column becomes a property of that name (as text).
 */
export function fromCsvRow(row: Record<string, string>): Record<string, unknown> | { error: string } {
  const out: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [column, text] of Object.entries(row)) {
    if (text === '') continue;
    if (column === 'properties') {
      try {
        out.properties = JSON.parse(text);
      } catch {
        return { error: '`properties` column is not JSON' };
      }
    } else if (['event', 'distinct_id', 'timestamp', 'uuid'].includes(column)) out[column] = text;
    else extra[column] = text;
  }
  if (Object.keys(extra).length > 0) out.properties = { ...extra, ...(isObject(out.properties) ? out.properties : {}) };
  return out;
}
