import { EVENTS_TABLE_COLUMNS } from '@tributary/clickhouse';
/**
 * The tables a project's HogQL may read, and what each field is in ClickHouse. The stored tables
 * (`events`, `person`, `person_distinct_id`, `groups`) hold every project's rows; a query names
 * only these HogQL tables, and the printer reads the stored ones through its tenant guard alone.
 * `sessions` is no stored table but a select over `events` (`sessions-view.ts`), guarded as events are.
 */
export type TableName = 'events' | 'persons' | 'person_distinct_ids' | 'groups';

export type FieldDef =
  /** A column of the printed table or subquery; `json` columns take `.key` property access. */
  | { kind: 'column'; column: string; json?: boolean }
  /** A property of the row's JSON `properties`, under its own name (`$session_id`). */
  | { kind: 'property'; key: string }
  /** The event's current person, through its distinct id: `person_id`. */
  | { kind: 'person_id' }
  /** A lazy join: `pdi.person_id`, `person.properties.email`. */
  | { kind: 'lazy'; join: 'pdi' | 'person' }
  /** The person as at the event, stored on the row (PostHog's person-on-events): `poe.id`, `poe.properties.email`. */
  | { kind: 'poe' };

export interface TableSchema {
  fields: Record<string, FieldDef>;
  /** What `*` expands to, in order. */
  asterisk: string[];
}

const column = (name: string, json = false): FieldDef => ({ kind: 'column', column: name, ...(json && { json }) });

export const TABLES: Record<TableName, TableSchema> = {
  events: {
    fields: {
      uuid: column('uuid'),
      event: column('event'),
      properties: column('properties', true),
      timestamp: column('timestamp'),
      /** The milliseconds of `timestamp`, which the events list orders by. */
      timestamp_ms: column('timestamp_ms'),
      distinct_id: column('distinct_id'),
      elements_chain: column('elements_chain'),
      created_at: column('created_at'),
      $session_id: { kind: 'property', key: '$session_id' },
      $group_0: column('group_0'),
      $group_1: column('group_1'),
      $group_2: column('group_2'),
      $group_3: column('group_3'),
      $group_4: column('group_4'),
      person_id: { kind: 'person_id' },
      pdi: { kind: 'lazy', join: 'pdi' },
      person: { kind: 'lazy', join: 'person' },
      poe: { kind: 'poe' },
    },
    asterisk: ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at', '$session_id', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'],
  },
  persons: {
    fields: { id: column('id'), properties: column('properties', true), created_at: column('created_at'), is_identified: column('is_identified') },
    asterisk: ['id', 'properties', 'created_at', 'is_identified'],
  },
  person_distinct_ids: {
    fields: { distinct_id: column('distinct_id'), person_id: column('person_id') },
    asterisk: ['distinct_id', 'person_id'],
  },
  groups: {
    fields: { index: column('index'), key: column('key'), properties: column('properties', true), created_at: column('created_at') },
    asterisk: ['index', 'key', 'properties', 'created_at'],
  },
};

/**
 * Where an event's person comes from, as PostHog's `personsOnEventsMode` modifier names it:
 * `disabled` looks every distinct id up in the identity tables; `person_id_override_properties_joined`
 * takes the person ingest stored on the event, overridden for the distinct ids that moved since,
 * and joins the persons only for their properties.
 */
export const PERSONS_ON_EVENTS_MODES = ['disabled', 'person_id_override_properties_joined'] as const;
export type PersonsOnEventsMode = (typeof PERSONS_ON_EVENTS_MODES)[number];
/** Where neither the query nor its project names a mode: answers as the identity tables are now, whatever the events carry. */
export const DEFAULT_PERSONS_ON_EVENTS_MODE: PersonsOnEventsMode = 'disabled';

export const isTableName = (name: string): name is TableName => Object.hasOwn(TABLES, name);

/** Every column of the stored events table and of its lazy join: a column alias of one of these names would hide it. */
export const EVENTS_AND_JOIN_COLUMNS = [
  ...EVENTS_TABLE_COLUMNS,
  '__pdi_person_id', '__person_properties', '__person_created_at', '__person_is_identified',
];

/** The stored events columns a subquery over events carries, so outer fields resolve as on the table. */
export const EVENTS_SUBQUERY_COLUMNS = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at', 'person_id', 'person_properties', 'timestamp_ms', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4'];

/**
 * Each person's latest version, deleted ones left out, with the given values of it: `alias` is
 * `sql`, an expression over the stored row `p`, as of the latest version.
 */
export const latestPersons = (guard: (alias: string) => string, values: { alias: string; sql: string }[]): string =>
  `SELECT ${['p.id AS id', ...values.map((v) => `argMax(${v.sql}, p.version) AS ${v.alias}`)].join(', ')} FROM person AS p WHERE ${guard('p')} GROUP BY p.id HAVING argMax(p.is_deleted, p.version) = 0`;

/**
 * Each distinct id's latest identity row, deleted ones left out, its person as `personAlias`.
 * `moved` keeps only the ids above version 0, with that version as `__version`, less those whose
 * pair (distinct_id, __version) is among the pairs `moved.squashed` selects: ingest writes an id
 * at version 0 on the person its events carry, and every move raises it. Version 0 rows are left
 * out before grouping, not after: an id that moved has its latest row above 0, and the others are
 * most rows. Only ids with a row stored since `moved.settledBefore` (a scalar) are grouped: the
 * squash that recorded it took every move stored before, so grouping the rest, every id that
 * ever moved, would find each one squashed.
 */
export const latestDistinctIds = (guard: (alias: string) => string, personAlias: string, moved?: { squashed: string; settledBefore: string }): string => {
  const having = ['argMax(d.is_deleted, d.version) = 0', ...(moved ? [`(distinct_id, __version) NOT IN (${moved.squashed})`] : [])];
  const since = moved ? ` AND d.version > 0 AND d.distinct_id IN (SELECT c.distinct_id FROM person_distinct_id AS c WHERE ${guard('c')} AND c._timestamp >= (${moved.settledBefore}))` : '';
  return `SELECT d.distinct_id AS distinct_id, argMax(d.person_id, d.version) AS ${personAlias}${moved ? ', max(d.version) AS __version' : ''} FROM person_distinct_id AS d WHERE ${guard('d')}${since} GROUP BY d.distinct_id HAVING ${having.join(' AND ')}`;
};

/** The latest version of each identity row, with deleted ones left out: the copies are versioned. */
export const IDENTITY_SUBQUERIES: Record<Exclude<TableName, 'events'>, (guard: (alias: string) => string) => string> = {
  persons: (guard) => latestPersons(guard, ['properties', 'created_at', 'is_identified'].map((c) => ({ alias: c, sql: `p.${c}` }))),
  person_distinct_ids: (guard) => latestDistinctIds(guard, 'person_id'),
  groups: (guard) =>
    `SELECT g.group_type_index AS index, g.group_key AS key, argMax(g.group_properties, g.version) AS properties, argMax(g.created_at, g.version) AS created_at FROM groups AS g WHERE ${guard('g')} GROUP BY g.group_type_index, g.group_key`,
};
