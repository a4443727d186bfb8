import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, type ClickHouse } from '@tributary/clickhouse';
import { GroupCommit } from '@tributary/kafka';
import { EVENT_COLUMNS, GROUP_COLUMNS, RowBuffer, WARNING_COLUMNS } from './clickhouse-rows.js';

/**
 * Writes a batch's rows. Identity rows go first: an event is only visible through the API once
 * its person copy can be found, and a replay after a crash between the inserts rewrites the
 * same versioned rows, which ReplacingMergeTree folds together.
 */
export async function writeRows(clickhouse: ClickHouse, rows: RowBuffer): Promise<void> {
  await Promise.all([
    clickhouse.insert('person', PERSON_COLUMNS, rows.persons),
    clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, rows.distinctIds),
    clickhouse.insert('groups', GROUP_COLUMNS, rows.groups),
    clickhouse.insert('ingestion_warnings', WARNING_COLUMNS, rows.warnings),
  ]);
  await clickhouse.insert('events', EVENT_COLUMNS, rows.events);
}

/**
 * The rows of every partition's chunks, written together: while one insert is in flight, the
 * chunks that finish meanwhile wait and go into the next one. ClickHouse makes a part per insert,
 * so a few large inserts keep merges cheap where one per chunk and partition would not.
 */
export class RowWriter {
  private readonly commit: GroupCommit<RowBuffer>;

  constructor(clickhouse: ClickHouse, maxRowsPerInsert = 10_000) {
    this.commit = new GroupCommit<RowBuffer>((buffers) => writeRows(clickhouse, RowBuffer.concat(buffers)), (rows) => rows.size, maxRowsPerInsert);
  }

  write(rows: RowBuffer): Promise<void> {
    return rows.size === 0 ? Promise.resolve() : this.commit.submit(rows);
  }
}
