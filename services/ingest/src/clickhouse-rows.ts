import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, TabSeparatedRows, WRITTEN_EVENT_COLUMNS, type DistinctIdRowOut, type EventRowOut, type PersonRowOut } from '@tributary/clickhouse';
import { DefinitionUpdates } from './definitions/definition-updates.js';

/** Rows as written to the ClickHouse tables of packages/clickhouse/migrations; events' and persons' are defined there. */
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

/** Everything one chunk produces, encoded as it is added, written to ClickHouse before its offsets are committed. */
export class RowBuffer {
  // Columns named as JSON hold only JSON text with every control character escaped: JSON.stringify's
  // output, or Postgres's jsonb text (see parsePropertiesJson).
  readonly events = new TabSeparatedRows<EventRowOut>(WRITTEN_EVENT_COLUMNS, ['properties', 'person_properties']);
  readonly persons = new TabSeparatedRows<PersonRowOut>(PERSON_COLUMNS, ['properties']);
  readonly distinctIds = new TabSeparatedRows<DistinctIdRowOut>(DISTINCT_ID_COLUMNS);
  readonly groups = new TabSeparatedRows<GroupRowOut>(GROUP_COLUMNS, ['group_properties']);
  readonly warnings = new TabSeparatedRows<WarningRowOut>(WARNING_COLUMNS, ['details']);
  /** The type of each warning row, for the metrics. */
  readonly warningTypes: string[] = [];
  /** Person outbox entries these rows settle (see PersonOutbox). */
  readonly outbox: number[] = [];
  /** Definitions the chunk's events bring, written to Postgres beside the rows (see DefinitionsWriter). */
  readonly definitions = new DefinitionUpdates();

  get size(): number {
    return this.events.length + this.persons.length + this.distinctIds.length + this.groups.length + this.warnings.length;
  }

  addWarning(row: WarningRowOut): void {
    this.warnings.add(row);
    this.warningTypes.push(row.type);
  }

  /** Frees the encoded rows' memory once ClickHouse took them; their counts stay (see TabSeparatedRows.release). */
  release(): void {
    for (const table of [this.events, this.persons, this.distinctIds, this.groups, this.warnings]) table.release();
  }

  static concat(buffers: readonly RowBuffer[]): RowBuffer {
    if (buffers.length === 1) return buffers[0]!;
    const all = new RowBuffer();
    for (const b of buffers) {
      all.events.append(b.events);
      all.persons.append(b.persons);
      all.distinctIds.append(b.distinctIds);
      all.groups.append(b.groups);
      all.warnings.append(b.warnings);
      all.warningTypes.push(...b.warningTypes);
      all.outbox.push(...b.outbox);
      all.definitions.append(b.definitions);
    }
    return all;
  }
}
