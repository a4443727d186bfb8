import { Sql, and, ident, inList, join, propertyText, sql } from '@tributary/clickhouse';

export const VALUES_LIMIT = 50;

export interface EventFilters {
  teamId: number;
  event?: string;
  /** Distinct ids the event must have: one from `distinct_id`, or all of a person's. */
  distinctIds?: readonly string[];
  after?: Date;
  before?: Date;
  uuid?: string;
  /** Compiled `properties` and `where` conditions. */
  conditions?: readonly Sql[];
}

export function eventConditions(filters: EventFilters): Sql {
  const conditions: Sql[] = [sql`team_id = ${filters.teamId}`];
  if (filters.event !== undefined) conditions.push(sql`event = ${filters.event}`);
  if (filters.distinctIds !== undefined) conditions.push(inList(sql`distinct_id`, filters.distinctIds));
  if (filters.after) conditions.push(sql`timestamp > ${filters.after}`);
  if (filters.before) conditions.push(sql`timestamp < ${filters.before}`);
  if (filters.uuid !== undefined) conditions.push(sql`toString(uuid) = ${filters.uuid}`);
  conditions.push(...(filters.conditions ?? []));
  return and(conditions);
}

const STORED_EVENT_COLUMNS = sql`toString(uuid) AS id, event, distinct_id, properties, timestamp, timestamp_ms, elements_chain,
    toString(person_id) AS person_id, person_properties`;

/**
 * Newest first. `LIMIT 1 BY uuid` hides replayed copies that ReplacingMergeTree has not merged
 * yet; one row more than asked tells whether a next page exists. `LIMIT offset, count` is the
 * form both 18.16 and current releases accept.
 */
export function listEventsQuery(filters: EventFilters, limit: number, offset: number, select?: readonly Sql[]): Sql {
  const columns = select ? join(select.map((expr, i) => sql`${expr} AS ${ident(`c${i}`)}`)) : STORED_EVENT_COLUMNS;
  return sql`SELECT ${columns}${select ? sql`, toString(uuid) AS _uuid` : sql``}
    FROM events
    WHERE ${eventConditions(filters)}
    ORDER BY timestamp DESC, timestamp_ms DESC, ${select ? sql`_uuid` : sql`id`} DESC
    LIMIT 1 BY ${select ? sql`_uuid` : sql`id`}
    LIMIT ${offset}, ${limit + 1}`;
}

/**
 * The first step of a stored-events page: which events, newest first. It reads only the sort
 * columns (and whatever the filters need), never `properties`, so a page of a large project does
 * not drag every event's JSON through the sort; `eventsByIdQuery` then fetches just those rows.
 */
export function pageOfEventsQuery(filters: EventFilters, limit: number, offset: number): Sql {
  return sql`SELECT toString(uuid) AS id, toString(timestamp) AS ts FROM events
    WHERE ${eventConditions(filters)}
    ORDER BY timestamp DESC, timestamp_ms DESC, uuid DESC
    LIMIT 1 BY uuid
    LIMIT ${offset}, ${limit + 1}`;
}

/** The stored-event rows of a page found by `pageOfEventsQuery`; the time bounds let ClickHouse skip other days. */
export function eventsByIdQuery(teamId: number, ids: readonly string[], from: string, to: string): Sql {
  const uuids = Sql.trusted(ids.map((id) => sql`toUUID(${id})`.text).join(', '));
  return sql`SELECT ${STORED_EVENT_COLUMNS} FROM events
    WHERE team_id = ${teamId} AND timestamp >= toDateTime(${from}, 'UTC') AND timestamp <= toDateTime(${to}, 'UTC') AND uuid IN (${uuids})
    LIMIT 1 BY id`;
}

/** Distinct values of one event property, most frequent first, for autocomplete. */
export function propertyValuesQuery(teamId: number, key: string, contains: string | undefined, event: string | undefined): Sql {
  const value = propertyText(sql`properties`, key);
  const conditions = [sql`team_id = ${teamId}`, sql`visitParamHas(properties, ${key})`];
  if (contains) conditions.push(sql`positionCaseInsensitive(${value}, ${contains}) > 0`);
  if (event) conditions.push(sql`event = ${event}`);
  return sql`SELECT ${value} AS name, count() AS c FROM events WHERE ${and(conditions)} GROUP BY name ORDER BY c DESC, name LIMIT ${VALUES_LIMIT}`;
}
