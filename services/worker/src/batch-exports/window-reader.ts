import { sql, type ClickHouse, type Sql } from '@tributary/clickhouse';
import type { ExportRecord, RunCursor } from '@tributary/batch-exports';

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
}

// Exports read at a lower priority than ingest's inserts, as queries do, without the queries' time limit.
export const EXPORT_READ_SETTINGS = { priority: 2, max_execution_time: 0, readonly: 2 };

const isoOf = (text: string, ms = 0) => `${text.replace(' ', 'T')}.${String(ms).padStart(3, '0')}Z`;
/**
 * A JSON column as the JSON text ClickHouse holds, which destinations take as it is (the S3 files
 * copy it into each line unparsed); a column that holds no JSON object becomes `{}`.
 */
const jsonText = (text: string | null): string => (text !== null && text.startsWith('{') && text.endsWith('}') ? text : '{}');

/** The records of one events row, as every destination is given them. */
export function eventRecord(row: StoredRow): ExportRecord {
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
 * The events a project stored in `[start, end)`, after `cursor`, in the order parts are cut:
 * by the time stored, then uuid, so a resumed run reads exactly the rows it had not written.
 * A copy of an event ClickHouse has not folded yet (a replay) is read once.
 */
export async function* readEventsWindow(
  clickhouse: ClickHouse,
  window: { teamId: number; start: Date; end: Date; cursor: RunCursor | null },
): AsyncIterable<{ record: ExportRecord; cursor: RunCursor }[]> {
  for await (const rows of clickhouse.stream<StoredRow>(eventsWindowStatement(window), { settings: EXPORT_READ_SETTINGS })) {
    yield rows.map((row) => ({ record: eventRecord(row), cursor: { inserted_at: row.inserted_at_text, key: row.uuid_text } }));
  }
}

/** The statement `readEventsWindow` streams (bench/export.ts times it alone). */
export function eventsWindowStatement(window: { teamId: number; start: Date; end: Date; cursor: RunCursor | null }): Sql {
  const after = window.cursor
    ? sql`AND (inserted_at > toDateTime(${window.cursor.inserted_at}, 'UTC') OR (inserted_at = toDateTime(${window.cursor.inserted_at}, 'UTC') AND toString(uuid) > ${window.cursor.key}))`
    : sql``;
  // Output names differ from the columns: an alias named as a column would stand for it in WHERE.
  return sql`SELECT toString(uuid) AS uuid_text, event, properties, distinct_id, team_id, toString(timestamp) AS timestamp_text, timestamp_ms,
      toString(created_at) AS created_at_text, elements_chain, toString(person_id) AS person_id_text, person_properties, toString(inserted_at) AS inserted_at_text
    FROM events
    WHERE team_id = ${window.teamId} AND inserted_at >= toDateTime(${formatTime(window.start)}, 'UTC') AND inserted_at < toDateTime(${formatTime(window.end)}, 'UTC') ${after}
    ORDER BY inserted_at, uuid_text
    LIMIT 1 BY uuid_text`;
}

/** How many events the window holds: the run's `records_total_count`. */
export async function countEventsWindow(clickhouse: ClickHouse, window: { teamId: number; start: Date; end: Date }): Promise<number> {
  const [row] = await clickhouse.query<{ total: string }>(
    sql`SELECT uniqExact(uuid) AS total FROM events
        WHERE team_id = ${window.teamId} AND inserted_at >= toDateTime(${formatTime(window.start)}, 'UTC') AND inserted_at < toDateTime(${formatTime(window.end)}, 'UTC')`,
  );
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

/**
 * The persons a project changed in `[start, end)` (a person row or a distinct-id row stored in
 * it), one record per distinct id as PostHog's persons export has them, with the person as it is
 * now; after `cursor`, ordered by distinct id.
 */
export async function* readPersonsWindow(
  clickhouse: ClickHouse,
  window: { teamId: number; start: Date; end: Date; cursor: RunCursor | null },
): AsyncIterable<{ record: ExportRecord; cursor: RunCursor }[]> {
  const team = window.teamId;
  const inWindow = sql`_timestamp >= toDateTime(${formatTime(window.start)}, 'UTC') AND _timestamp < toDateTime(${formatTime(window.end)}, 'UTC')`;
  const after = window.cursor ? sql`AND distinct_id > ${window.cursor.key}` : sql``;
  // Aliases differ from the columns they aggregate: ClickHouse would read the alias inside the aggregate.
  const statement = sql`SELECT d.distinct_id AS distinct_id, toString(d.current_person) AS person_id_text, d.latest_version AS distinct_id_version, d.deleted AS distinct_id_deleted,
      p.latest_properties AS properties, p.person_version AS person_version, toString(p.first_seen) AS created_at_text
    FROM (
      SELECT distinct_id, argMax(person_id, version) AS current_person, max(version) AS latest_version, argMax(is_deleted, version) AS deleted
      FROM person_distinct_id WHERE team_id = ${team} ${after}
      GROUP BY distinct_id
      HAVING distinct_id IN (SELECT distinct_id FROM person_distinct_id WHERE team_id = ${team} AND ${inWindow})
        OR current_person IN (SELECT id FROM person WHERE team_id = ${team} AND ${inWindow})
    ) AS d
    ANY LEFT JOIN (
      SELECT id AS current_person, argMax(properties, version) AS latest_properties, max(version) AS person_version, argMax(created_at, version) AS first_seen
      FROM person WHERE team_id = ${team} GROUP BY id
    ) AS p USING current_person
    ORDER BY distinct_id`;
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
