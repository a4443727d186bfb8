import type { DistinctIdRowOut, PersonRowOut } from '@tributary/clickhouse';

/** Rows as written to the ClickHouse tables of packages/clickhouse/migrations. */
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
  person_properties: string;
  person_created_at: string;
  group_0: string;
  group_1: string;
  group_2: string;
  group_3: string;
  group_4: string;
  inserted_at: string;
}

export const EVENT_COLUMNS = [
  'uuid', 'event', 'properties', 'timestamp', 'timestamp_ms', 'team_id', 'distinct_id', 'elements_chain', 'created_at',
  'person_id', 'person_properties', 'person_created_at', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4', 'inserted_at',
] as const satisfies readonly (keyof EventRowOut)[];

export interface GroupRowOut {
  group_type_index: number;
  group_key: string;
  created_at: string;
  team_id: number;
  group_properties: string;
  version: number;
}

export const GROUP_COLUMNS = ['group_type_index', 'group_key', 'created_at', 'team_id', 'group_properties', 'version'] as const satisfies readonly (keyof GroupRowOut)[];

export interface WarningRowOut {
  team_id: number;
  source: string;
  type: string;
  details: string;
  timestamp: string;
}

export const WARNING_COLUMNS = ['team_id', 'source', 'type', 'details', 'timestamp'] as const satisfies readonly (keyof WarningRowOut)[];

/** Everything one Kafka batch produces, written to ClickHouse before its offsets are committed. */
export class RowBuffer {
  events: EventRowOut[] = [];
  persons: PersonRowOut[] = [];
  distinctIds: DistinctIdRowOut[] = [];
  groups: GroupRowOut[] = [];
  warnings: WarningRowOut[] = [];
  /** Person outbox entries these rows settle (see PersonOutbox). */
  outbox: number[] = [];

  get size(): number {
    return this.events.length + this.persons.length + this.distinctIds.length + this.groups.length + this.warnings.length;
  }

  static concat(buffers: readonly RowBuffer[]): RowBuffer {
    if (buffers.length === 1) return buffers[0]!;
    const all = new RowBuffer();
    all.events = all.events.concat(...buffers.map((b) => b.events));
    all.persons = all.persons.concat(...buffers.map((b) => b.persons));
    all.distinctIds = all.distinctIds.concat(...buffers.map((b) => b.distinctIds));
    all.groups = all.groups.concat(...buffers.map((b) => b.groups));
    all.warnings = all.warnings.concat(...buffers.map((b) => b.warnings));
    all.outbox = all.outbox.concat(...buffers.map((b) => b.outbox));
    return all;
  }
}

