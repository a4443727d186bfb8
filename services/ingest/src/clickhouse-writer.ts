import { isRefusedRows, type Cell, type ClickHouse, type TabSeparatedRows } from '@tributary/clickhouse';
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

/** A row ClickHouse refused for its content, as the TabSeparated line it was sent as. */
export interface RefusedRow {
  table: string;
  line: Buffer;
  /** ClickHouse's own words, first line only (it goes on to dump the row). */
  reason: string;
}

const NONE_REFUSED: readonly RefusedRow[] = Object.freeze([]);

/**
 * More refused rows than this in one table of one write means ClickHouse refuses the table, not
 * rows (a materialized view that throws for everything, a column whose type changed under
 * ingest): the rows then wait, as for a store that is away, rather than all go to the
 * dead-letter topic one by one. It also bounds the inserts spent finding them.
 */
export const MOST_REFUSED_ROWS = 32;

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n', 1)[0]!;

/**
 * Inserts `rows` into `table` but for the rows ClickHouse refuses for their content, which it
 * returns in their order. ClickHouse does not say which row a materialized view refused, so they
 * are found by halving: each round splits every part still refused in two and sends both halves
 * again, and a refused part of one row is a refused row. One bad row among 40,000 costs about 30
 * inserts. Any other failure is thrown, and the caller writes the rows again; parts already taken
 * are then sent twice, which the tables' versions and uuids absorb.
 */
async function insertAroundRefused<Row extends Record<keyof Row, Cell>>(clickhouse: ClickHouse, table: string, rows: TabSeparatedRows<Row>): Promise<readonly RefusedRow[]> {
  interface Part {
    /** Where the part's first row is among `rows`. */
    from: number;
    lines: readonly Buffer[];
    reason: string;
  }
  const refusedPart = async (from: number, lines: readonly Buffer[] | null): Promise<Part | null> => {
    try {
      await clickhouse.insertEncoded(table, lines === null ? rows : rows.withLines(lines));
      return null;
    } catch (error) {
      if (!isRefusedRows(error)) throw error;
      return { from, lines: lines ?? rows.rowLines(), reason: firstLine(error) };
    }
  };
  const whole = await refusedPart(0, null);
  if (!whole) return NONE_REFUSED;
  const found: (RefusedRow & { at: number })[] = [];
  for (let refused = [whole]; refused.length > 0; ) {
    const next: Part[] = [];
    for (const { from, lines, reason } of refused) {
      if (lines.length === 1) {
        found.push({ table, line: lines[0]!, reason, at: from });
        continue;
      }
      const half = Math.ceil(lines.length / 2);
      for (const [at, part] of [[from, lines.slice(0, half)], [from + half, lines.slice(half)]] as const) {
        const stillRefused = await refusedPart(at, part);
        if (stillRefused) next.push(stillRefused);
      }
    }
    if (found.length + next.length > MOST_REFUSED_ROWS) {
      throw new Error(`ClickHouse refused more than ${MOST_REFUSED_ROWS} rows of one write into ${table} (${whole.reason}); taken as the table refusing them all, so they wait`);
    }
    refused = next;
  }
  return found.sort((a, b) => a.at - b.at).map(({ table: t, line, reason }) => ({ table: t, line, reason }));
}

/** Writes the rows as `writeRows` does, but for those ClickHouse refuses for their content, which it returns. */
async function writeRowsAroundRefused(clickhouse: ClickHouse, rows: RowBuffer): Promise<readonly RefusedRow[]> {
  const identity = await Promise.allSettled([
    insertAroundRefused(clickhouse, 'person', rows.persons),
    insertAroundRefused(clickhouse, 'person_distinct_id', rows.distinctIds),
    insertAroundRefused(clickhouse, 'groups', rows.groups),
    insertAroundRefused(clickhouse, 'ingestion_warnings', rows.warnings),
  ]);
  const refused: RefusedRow[] = [];
  for (const outcome of identity) {
    if (outcome.status === 'rejected') throw outcome.reason;
    refused.push(...outcome.value);
  }
  refused.push(...(await insertAroundRefused(clickhouse, 'events', rows.events)));
  return refused.length === 0 ? NONE_REFUSED : refused;
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
  // be grouped with again on the next attempt, and alone, the rows refused are found and left out.
  private readonly refused = new WeakSet<RowBuffer>();
  // Rows already taken, and released, with those left out: a caller that retries a step after the
  // write (it failed later on) must not send them again, which would fail for good on memory
  // already freed, and must still learn which were refused.
  private readonly written = new WeakMap<RowBuffer, readonly RefusedRow[]>();

  constructor(
    private readonly clickhouse: ClickHouse,
    options: { maxRowsPerInsert: number; minIntervalMs?: number; quietIntervalMs?: number },
  ) {
    this.commit = new GroupCommit<RowBuffer>(
      async (buffers) => {
        try {
          await writeRows(clickhouse, RowBuffer.concat(buffers));
        } catch (error) {
          if (buffers.length > 1 || isRefusedRows(error)) for (const rows of buffers) this.refused.add(rows);
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
   * nothing may stream them again. Rows written alone after a refused insert resolve with those
   * ClickHouse refused for their content and did not take (see `insertAroundRefused`), for the
   * caller to keep elsewhere. Rows written already resolve at once, with the same answer.
   */
  async write(rows: RowBuffer): Promise<readonly RefusedRow[]> {
    if (rows.size === 0) return NONE_REFUSED;
    const done = this.written.get(rows);
    if (done) return done;
    let refused = NONE_REFUSED;
    if (this.refused.has(rows)) refused = await writeRowsAroundRefused(this.clickhouse, rows);
    else await this.commit.submit(rows);
    this.written.set(rows, refused);
    rows.release();
    return refused;
  }
}
