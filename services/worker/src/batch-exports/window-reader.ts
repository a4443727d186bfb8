import { join, jsonObjectText, jsonStringLiteral, sql, type ClickHouse, type Sql } from '@tributary/clickhouse';
import { jsonLineFields, type ColumnKind, type EncodedEvent, type ExportRecord, type RunCursor, type WindowTime } from '@tributary/batch-exports';

/** An events row as the export reads it: ClickHouse's text, with the key the run resumes after. */
interface StoredRow {
  uuid_text: string;
  event: string;
  properties: string;
  distinct_id: string;
  team_id: string;
  timestamp_text: string;
  timestamp_ms: number;
  created_at_text: string;
  elements_chain: string;
  person_id_text: string;
  person_properties: string;
  inserted_at_text: string;
  /** The text of the time the window selects by, which the run's cursor keeps. */
  window_time_text: string;
}

// Exports read without the queries' time limit: a window's rows are read to the end, however long.
export const EXPORT_READ_SETTINGS = { max_execution_time: 0, readonly: 2 };

const isoOf = (text: string, ms = 0) => `${text.replace(' ', 'T')}.${String(ms).padStart(3, '0')}Z`;
/**
 * A JSON column as the JSON text ClickHouse holds, which destinations take as it is (the S3 files
 * copy it into each line unparsed); a column that holds no JSON object becomes `{}`.
 */
const jsonText = (text: string | null): string => (text !== null && text.startsWith('{') && text.endsWith('}') ? text : '{}');

/** The records of one events row, as every destination is given them. */
export function eventRecord(row: Omit<StoredRow, 'window_time_text'>): ExportRecord {
  return {
    uuid: row.uuid_text,
    event: row.event,
    properties: jsonText(row.properties),
    distinct_id: row.distinct_id,
    team_id: Number(row.team_id),
    timestamp: isoOf(row.timestamp_text, row.timestamp_ms),
    created_at: isoOf(row.created_at_text),
    elements_chain: row.elements_chain,
    person_id: row.person_id_text,
    person_properties: jsonText(row.person_properties),
    inserted_at: isoOf(row.inserted_at_text),
  };
}

/**
 * The events of a project's window `[start, end)` by the window's time (`window.by`), after
 * `cursor`, in the order parts are cut: by that time, then uuid, so a resumed run reads exactly
 * the rows it had not written. A copy of an event ClickHouse has not folded yet (a replay) is read once.
 */
export async function* readEventsWindow(clickhouse: ClickHouse, window: EventsWindow): AsyncIterable<{ record: ExportRecord; cursor: RunCursor }[]> {
  for await (const rows of clickhouse.stream<StoredRow>(eventsWindowStatement(window), { settings: EXPORT_READ_SETTINGS })) {
    yield rows.map((row) => ({ record: eventRecord(row), cursor: { inserted_at: row.window_time_text, key: row.uuid_text } }));
  }
}

/** The statement `readEventsWindow` streams (bench/export.ts times it alone). */
export function eventsWindowStatement(window: EventsWindow): Sql {
  // Output names differ from the columns: an alias named as a column would stand for it in WHERE.
  return sql`SELECT toString(uuid) AS uuid_text, event, properties, distinct_id, team_id, toString(timestamp) AS timestamp_text, timestamp_ms,
      toString(created_at) AS created_at_text, elements_chain, toString(person_id) AS person_id_text, person_properties, toString(inserted_at) AS inserted_at_text,
      toString(${windowColumn(window.by)}) AS window_time_text
    FROM events
    WHERE ${windowEvents(window)}
    ORDER BY ${windowColumn(window.by)}, uuid_text
    LIMIT 1 BY uuid_text`;
}

type EventsWindow = { teamId: number; start: Date; end: Date; by: WindowTime; cursor: RunCursor | null };

// Both are DateTime columns of events, to the second; a cursor's time is their text.
const windowColumn = (by: WindowTime): Sql => (by === 'timestamp' ? sql`timestamp` : sql`inserted_at`);

/** The window's events after the cursor, by the window's time and then uuid (the order parts are cut in). */
function windowEvents(window: Omit<EventsWindow, 'cursor'> & { cursor?: RunCursor | null }): Sql {
  const time = windowColumn(window.by);
  const after = window.cursor
    ? sql`AND (${time} > toDateTime(${window.cursor.inserted_at}, 'UTC') OR (${time} = toDateTime(${window.cursor.inserted_at}, 'UTC') AND toString(uuid) > ${window.cursor.key}))`
    : sql``;
  return sql`team_id = ${window.teamId} AND ${time} >= toDateTime(${formatTime(window.start)}, 'UTC') AND ${time} < toDateTime(${formatTime(window.end)}, 'UTC') ${after}`;
}

const isoTime = (column: Sql, milliseconds?: Sql) =>
  sql`concat(replaceOne(toString(${column}), ' ', 'T'), '.', ${milliseconds ? sql`substring(toString(1000 + ${milliseconds}), 2, 3)` : sql`'000'`}, 'Z')`;

/** Each field of an event's record as ClickHouse computes it from the events row, as `eventRecord` reads it. */
const EVENT_FIELDS: Record<string, Sql> = {
  uuid: sql`toString(uuid)`,
  event: sql`event`,
  properties: sql`properties`,
  distinct_id: sql`distinct_id`,
  timestamp: isoTime(sql`timestamp`, sql`timestamp_ms`),
  created_at: isoTime(sql`created_at`),
  elements_chain: sql`elements_chain`,
  person_id: sql`toString(person_id)`,
  person_properties: sql`person_properties`,
  inserted_at: isoTime(sql`inserted_at`),
};

const JSON_VALUES: Record<ColumnKind, (value: Sql) => Sql> = {
  string: jsonStringLiteral,
  json: jsonObjectText,
  time: (value) => sql`concat('"', ${value}, '"')`,
  integer: (value) => sql`toString(${value})`,
  boolean: (value) => sql`if(${value}, 'true', 'false')`,
};

/** The events' JSON line as `jsonLine` writes an event's record, written by ClickHouse; the row's own newline ends it. */
function eventLine(): Sql {
  const fields = jsonLineFields('events').flatMap(({ key, from, kind }, i) => {
    const value = EVENT_FIELDS[from];
    if (!value) throw new Error(`no ClickHouse expression for the events field ${from}`);
    return [sql`${i === 0 ? key : `,${key}`}`, JSON_VALUES[kind](value)];
  });
  return sql`concat(${join(fields)}, '}')`;
}

/**
 * The statement `readEncodedEventsWindow` streams: the rows `eventsWindowStatement` reads, each as
 * its cursor's two fields, its name as a JSON literal and its line. Every field is free of tabs
 * and newlines but the line's own ending, so the rows can be read unescaped.
 */
export function encodedEventsWindowStatement(window: EventsWindow): Sql {
  return sql`SELECT toString(${windowColumn(window.by)}) AS window_time_text, toString(uuid) AS uuid_text, ${jsonStringLiteral(sql`event`)} AS event_literal, ${eventLine()} AS line
    FROM events
    WHERE ${windowEvents(window)}
    ORDER BY ${windowColumn(window.by)}, uuid_text
    LIMIT 1 BY uuid_text`;
}

/** An event as ClickHouse encoded it, with the text its cursor is read from. */
export interface EncodedRow extends EncodedEvent {
  /** `<window time>\t<uuid>`. */
  cursorText: Buffer;
}

// `2024-01-01 00:00:00` and a uuid, each followed by a tab.
const UUID_END = 19 + 1 + 36;

/** A row of `encodedEventsWindowStatement`; anything else is ClickHouse's error text after the rows it sent. */
function encodedRow(row: Buffer): EncodedRow {
  const eventEnd = row.indexOf(9, UUID_END + 1);
  if (row[19] !== 9 || row[UUID_END] !== 9 || eventEnd === -1 || row[eventEnd + 1] !== 0x7b || row[row.length - 2] !== 0x7d) {
    throw new Error(`ClickHouse answered a line that is not an event's: ${row.toString().slice(0, 500)}`);
  }
  return { cursorText: row.subarray(0, UUID_END), event: row.subarray(UUID_END + 1, eventEnd), line: row.subarray(eventEnd + 1) };
}

export function encodedRowCursor(row: EncodedRow): RunCursor {
  const text = row.cursorText.toString();
  return { inserted_at: text.slice(0, 19), key: text.slice(20) };
}

/** `readEventsWindow` with each event as the JSON line ClickHouse wrote for it, for destinations that take them. */
export async function* readEncodedEventsWindow(clickhouse: ClickHouse, window: EventsWindow): AsyncIterable<EncodedRow[]> {
  for await (const rows of clickhouse.streamLines(encodedEventsWindowStatement(window), { settings: EXPORT_READ_SETTINGS })) yield rows.map(encodedRow);
}

/** How many events the window holds: the run's `records_total_count`. */
export async function countEventsWindow(clickhouse: ClickHouse, window: { teamId: number; start: Date; end: Date; by: WindowTime }): Promise<number> {
  const [row] = await clickhouse.query<{ total: string }>(sql`SELECT uniqExact(uuid) AS total FROM events WHERE ${windowEvents(window)}`);
  return Number(row?.total ?? 0);
}

interface StoredPersonRow {
  distinct_id: string;
  person_id_text: string;
  distinct_id_version: string;
  distinct_id_deleted: number;
  properties: string | null;
  person_version: string | null;
  created_at_text: string | null;
}

type PersonsWindow = { teamId: number; start: Date; end: Date; by: WindowTime; cursor: RunCursor | null };

/**
 * The persons of a project's window, one record per distinct id as PostHog's persons export has
 * them, with the person as it is now; after `cursor`, ordered by distinct id. A scheduled run
 * takes the persons changed in it (a person row or a distinct-id row stored in it); a backfill
 * takes the persons whose latest version says they were created in it (`created_at` is the time of
 * the person's first event, imported history included), so each distinct id is in one window.
 */
export function personsWindowStatement(window: PersonsWindow): Sql {
  const team = window.teamId;
  const between = (column: Sql) => sql`${column} >= toDateTime(${formatTime(window.start)}, 'UTC') AND ${column} < toDateTime(${formatTime(window.end)}, 'UTC')`;
  const after = window.cursor ? sql`AND distinct_id > ${window.cursor.key}` : sql``;
  const inWindow =
    window.by === 'timestamp'
      ? sql`current_person IN (SELECT id FROM person WHERE team_id = ${team} GROUP BY id HAVING ${between(sql`argMax(created_at, version)`)})`
      : sql`distinct_id IN (SELECT distinct_id FROM person_distinct_id WHERE team_id = ${team} AND ${between(sql`_timestamp`)})
        OR current_person IN (SELECT id FROM person WHERE team_id = ${team} AND ${between(sql`_timestamp`)})`;
  // Aliases differ from the columns they aggregate: ClickHouse would read the alias inside the aggregate.
  return sql`SELECT d.distinct_id AS distinct_id, toString(d.current_person) AS person_id_text, d.latest_version AS distinct_id_version, d.deleted AS distinct_id_deleted,
      p.latest_properties AS properties, p.person_version AS person_version, toString(p.first_seen) AS created_at_text
    FROM (
      SELECT distinct_id, argMax(person_id, version) AS current_person, max(version) AS latest_version, argMax(is_deleted, version) AS deleted
      FROM person_distinct_id WHERE team_id = ${team} ${after}
      GROUP BY distinct_id
      HAVING ${inWindow}
    ) AS d
    ANY LEFT JOIN (
      SELECT id AS current_person, argMax(properties, version) AS latest_properties, max(version) AS person_version, argMax(created_at, version) AS first_seen
      FROM person WHERE team_id = ${team} GROUP BY id
    ) AS p USING current_person
    ORDER BY distinct_id`;
}

/** The records of `personsWindowStatement`. */
export async function* readPersonsWindow(clickhouse: ClickHouse, window: PersonsWindow): AsyncIterable<{ record: ExportRecord; cursor: RunCursor }[]> {
  const team = window.teamId;
  const statement = personsWindowStatement(window);
  for await (const rows of clickhouse.stream<StoredPersonRow>(statement, { settings: EXPORT_READ_SETTINGS })) {
    yield rows.map((row) => ({
      record: {
        team_id: team,
        distinct_id: row.distinct_id,
        person_id: row.person_id_text,
        properties: jsonText(row.properties),
        person_version: Number(row.person_version ?? 0),
        person_distinct_id_version: Number(row.distinct_id_version),
        created_at: row.created_at_text ? isoOf(row.created_at_text) : null,
        is_deleted: Number(row.distinct_id_deleted) === 1,
      },
      cursor: { inserted_at: '', key: row.distinct_id },
    }));
  }
}

/** `2024-01-01 00:00:00`: a DateTime ClickHouse 18.16 reads without a format setting. */
const formatTime = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');
