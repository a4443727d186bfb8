import type { EncodedField } from './tab-separated.js';

/** An `events` row as a writer sends it (packages/clickhouse/migrations). */
export interface EventRowOut {
  uuid: string;
  event: string;
  properties: string;
  timestamp: string;
  timestamp_ms: number;
  team_id: number;
  distinct_id: string;
  elements_chain: string;
  created_at: string;
  person_id: string;
  /** Ingest encodes it as soon as the event is applied (see EventProcessor). */
  person_properties: string | EncodedField;
  person_created_at: string;
  group_0: string;
  group_1: string;
  group_2: string;
  group_3: string;
  group_4: string;
}

/** The columns of a written event row known before its person is: ingest encodes them first (see RowHeads). */
export const WRITTEN_EVENT_HEAD_COLUMNS = [
  'uuid', 'event', 'properties', 'timestamp', 'timestamp_ms', 'team_id', 'distinct_id', 'elements_chain', 'created_at',
] as const satisfies readonly (keyof EventRowOut)[];

/**
 * The columns a writer of `events` sets, in order. `inserted_at` is not among them: ClickHouse
 * sets it to when it stored the row (its DEFAULT now()), which is what batch exports cut their
 * windows by.
 */
export const WRITTEN_EVENT_COLUMNS = [
  ...WRITTEN_EVENT_HEAD_COLUMNS, 'person_id', 'person_properties', 'person_created_at', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4',
] as const satisfies readonly (keyof EventRowOut)[];

/** Every column the `events` table stores: those written, then the time ClickHouse stored the row. */
export const EVENTS_TABLE_COLUMNS = [...WRITTEN_EVENT_COLUMNS, 'inserted_at'] as const;

export type EventsTableColumn = (typeof EVENTS_TABLE_COLUMNS)[number];
