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
 * The rows of every partition's chunks, written together: while one insert is in flight, and
 * for at least `minIntervalMs` after the previous one started, the chunks that finish wait and go
 * into the next one. ClickHouse makes a part per table per insert and merges parts in the
 * background, rewriting each row several times over: a few large inserts keep that work small
 * where one per chunk would cost it more CPU than the inserts themselves.
 */
export class RowWriter {
  private readonly commit: GroupCommit<RowBuffer>;

  constructor(clickhouse: ClickHouse, options: { maxRowsPerInsert?: number; minIntervalMs?: number } = {}) {
    this.commit = new GroupCommit<RowBuffer>(
      (buffers) => writeRows(clickhouse, RowBuffer.concat(buffers)),
      (rows) => rows.size,
      options.maxRowsPerInsert ?? 100_000,
      options.minIntervalMs ?? 0,
    );
  }

  write(rows: RowBuffer): Promise<void> {
    return rows.size === 0 ? Promise.resolve() : this.commit.submit(rows);
  }
}
