import type { ClickHouse } from '@tributary/clickhouse';
import { GroupCommit } from '@tributary/kafka';
import { RowBuffer } from './clickhouse-rows.js';

/**
 * Writes a batch's rows. Identity rows go first: an event is only visible through the API once
 * its person copy can be found, and a replay after a crash between the inserts rewrites the
 * same versioned rows, which ReplacingMergeTree folds together.
 */
export async function writeRows(clickhouse: ClickHouse, rows: RowBuffer): Promise<void> {
  // Every insert has ended before a failure is passed on: the rows are then written again, alone,
  // and released once taken, and an insert still streaming them would read freed memory.
  const identity = await Promise.allSettled([
    clickhouse.insertEncoded('person', rows.persons),
    clickhouse.insertEncoded('person_distinct_id', rows.distinctIds),
    clickhouse.insertEncoded('groups', rows.groups),
    clickhouse.insertEncoded('ingestion_warnings', rows.warnings),
  ]);
  const failed = identity.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  await clickhouse.insertEncoded('events', rows.events);
}

/**
 * The rows of every partition's chunks, written together: while one insert is in flight, and
 * for at least `minIntervalMs` after the previous one started, the chunks that finish wait and go
 * into the next one, which starts early once `maxRowsPerInsert` rows wait (partitions that
 * process ahead of their inserts would otherwise pause, and their rows would pile up in memory). ClickHouse makes a part per table per insert and merges parts in the
 * background, rewriting each row several times over: a few large inserts keep that work small
 * where one per chunk would cost it more CPU than the inserts themselves.
 */
export class RowWriter {
  private readonly commit: GroupCommit<RowBuffer>;
  // Rows that were in a refused insert are written alone from then on: if ClickHouse refused
  // them for their content, they hold back only their own partition, not every chunk they would
  // be grouped with again on the next attempt.
  private readonly refused = new WeakSet<RowBuffer>();
  // Rows already taken, and released: a caller that retries a step after the write (it failed
  // later on) must not send them again, which would fail for good on memory already freed.
  private readonly written = new WeakSet<RowBuffer>();

  constructor(
    private readonly clickhouse: ClickHouse,
    options: { maxRowsPerInsert: number; minIntervalMs?: number; quietIntervalMs?: number },
  ) {
    this.commit = new GroupCommit<RowBuffer>(
      async (buffers) => {
        try {
          await writeRows(clickhouse, RowBuffer.concat(buffers));
        } catch (error) {
          if (buffers.length > 1) for (const rows of buffers) this.refused.add(rows);
          throw error;
        }
      },
      (rows) => rows.size,
      { maxSendBytes: options.maxRowsPerInsert, minIntervalMs: options.minIntervalMs, quietIntervalMs: options.quietIntervalMs },
    );
  }

  /** Nothing more to write for now: what waits goes once `quietIntervalMs` since the last insert has passed. */
  quiet(): void {
    this.commit.quiet();
  }

  /**
   * Resolves once ClickHouse took the rows, which are then released: they count as before, but
   * nothing may stream them again. Rows written already resolve at once.
   */
  async write(rows: RowBuffer): Promise<void> {
    if (rows.size === 0 || this.written.has(rows)) return;
    await (this.refused.has(rows) ? writeRows(this.clickhouse, rows) : this.commit.submit(rows));
    this.written.add(rows);
    rows.release();
  }
}
