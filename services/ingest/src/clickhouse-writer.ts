import type { ClickHouse } from '@tributary/clickhouse';
import { GroupCommit } from '@tributary/kafka';
import { RowBuffer } from './clickhouse-rows.js';

/**
 * Writes a batch's rows. Identity rows go first: an event is only visible through the API once
 * its person copy can be found, and a replay after a crash between the inserts rewrites the
 * same versioned rows, which ReplacingMergeTree folds together.
 */
export async function writeRows(clickhouse: ClickHouse, rows: RowBuffer): Promise<void> {
  await Promise.all([
    clickhouse.insertEncoded('person', rows.persons),
    clickhouse.insertEncoded('person_distinct_id', rows.distinctIds),
    clickhouse.insertEncoded('groups', rows.groups),
    clickhouse.insertEncoded('ingestion_warnings', rows.warnings),
  ]);
  await clickhouse.insertEncoded('events', rows.events);
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
