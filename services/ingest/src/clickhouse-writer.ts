import { isRefusedRows, type Cell, type ClickHouse, type TabSeparatedRows } from '@tributary/clickhouse';
import { GroupCommit } from '@tributary/kafka';
import { RowBuffer } from './clickhouse-rows.js';

/** A row ClickHouse refused for its content, as the TabSeparated line it was sent as. */
export interface RefusedRow {
  table: string;
  line: Buffer;
  /** ClickHouse's own words, first line only (it goes on to dump the row). */
  reason: string;
}

const NONE_REFUSED: readonly RefusedRow[] = Object.freeze([]);

type InsertTable = <Row extends Record<keyof Row, Cell>>(table: string, rows: TabSeparatedRows<Row>) => Promise<readonly RefusedRow[]>;

/**
 * Writes a batch's rows with `insert`, returning the rows it left out. Identity rows go first: an
 * event is only visible through the API once its person copy can be found, and a replay after a
 * crash between the inserts rewrites the same versioned rows, which ReplacingMergeTree folds
 * together.
 */
async function writeTables(rows: RowBuffer, insert: InsertTable): Promise<readonly RefusedRow[]> {
  // Every insert has ended before a failure is passed on: the rows are then written again, alone,
  // and released once taken, and an insert still streaming them would read freed memory.
  const identity = await Promise.allSettled([
    insert('person', rows.persons),
    insert('person_distinct_id', rows.distinctIds),
    insert('groups', rows.groups),
    insert('ingestion_warnings', rows.warnings),
  ]);
  const refused: RefusedRow[] = [];
  for (const outcome of identity) {
    if (outcome.status === 'rejected') throw outcome.reason;
    refused.push(...outcome.value);
  }
  refused.push(...(await insert('events', rows.events)));
  return refused.length === 0 ? NONE_REFUSED : refused;
}

/**
 * Refused rows a table may count since it last took any before ingest takes it as refusing the
 * table rather than rows (a materialized view that throws for everything, a column whose type
 * changed under ingest): its rows then wait, as for a store that is away, rather than all go to
 * the dead-letter topic. Counted across writes, so small writes, each refused whole, stop here too.
 */
export const MOST_REFUSED_ROWS = 32;

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n', 1)[0]!;

/** ClickHouse refuses a table's rows as a whole, as far as ingest can tell (see MOST_REFUSED_ROWS): they wait. */
class TableRefusing extends Error {
  constructor(
    readonly table: string,
    reason: string,
    /** Whether the rows written had more than MOST_REFUSED_ROWS refused themselves, rather than the table's earlier writes. */
    readonly byTheseRows: boolean,
  ) {
    super(`ClickHouse refused more than ${MOST_REFUSED_ROWS} rows of ${table} since it last took any (${reason}); taken as the table refusing them all, so they wait`);
    this.name = 'TableRefusing';
  }
}

/**
 * Inserts rows but for those ClickHouse refuses for their content, which it finds and returns.
 * ClickHouse does not say which row a materialized view refused, so they are found by halving.
 */
class RefusedRowsFinder {
  /** Per table, the rows refused since it last took any (at least one per refused part: a lower bound). */
  private readonly refusedSinceTaken = new Map<string, number>();

  constructor(private readonly clickhouse: ClickHouse) {}

  /** ClickHouse took rows of `table`: whatever it refused before was about rows, not the table. */
  taken(table: string): void {
    this.refusedSinceTaken.delete(table);
  }

  /**
   * Inserts `rows` into `table` but for the rows ClickHouse refuses for their content, which it
   * returns in their order. Each round splits every part still refused in two and sends both
   * halves again; a refused part of one row is a refused row. One bad row among 40,000 costs
   * about 30 inserts. Any other failure is thrown, and the caller writes the rows again; parts
   * already taken are then sent twice, which the tables' versions and uuids absorb (all but
   * `ingestion_warnings`, whose rows are then counted twice). `wholeOnly`: rows that reached the
   * limit before are not halved again (see RowWriter.tripped).
   */
  async insert<Row extends Record<keyof Row, Cell>>(table: string, rows: TabSeparatedRows<Row>, wholeOnly: boolean): Promise<readonly RefusedRow[]> {
    interface Part {
      /** Where the part's first row is among `rows`. */
      from: number;
      lines: readonly Buffer[];
      reason: string;
    }
    const refusedPart = async (from: number, lines: readonly Buffer[] | null): Promise<Part | null> => {
      try {
        await this.clickhouse.insertEncoded(table, lines === null ? rows : rows.withLines(lines));
        if (rows.length > 0) this.taken(table);
        return null;
      } catch (error) {
        if (!isRefusedRows(error)) throw error;
        return { from, lines: lines ?? rows.rowLines(), reason: firstLine(error) };
      }
    };
    const whole = await refusedPart(0, null);
    if (!whole) return NONE_REFUSED;
    // Past the limit already, only the whole insert is tried until the table takes rows again.
    if (wholeOnly || (this.refusedSinceTaken.get(table) ?? 0) >= MOST_REFUSED_ROWS) throw new TableRefusing(table, whole.reason, wholeOnly);
    const found: Part[] = [];
    for (let refused = [whole]; refused.length > 0; ) {
      const next: Part[] = [];
      for (const part of refused) {
        if (part.lines.length === 1) {
          found.push(part);
          continue;
        }
        const half = Math.ceil(part.lines.length / 2);
        for (const [from, lines] of [[part.from, part.lines.slice(0, half)], [part.from + half, part.lines.slice(half)]] as const) {
          const stillRefused = await refusedPart(from, lines);
          if (stillRefused) next.push(stillRefused);
        }
      }
      const atLeast = (this.refusedSinceTaken.get(table) ?? 0) + found.length + next.length;
      if (atLeast > MOST_REFUSED_ROWS) {
        this.refusedSinceTaken.set(table, atLeast);
        throw new TableRefusing(table, whole.reason, found.length + next.length > MOST_REFUSED_ROWS);
      }
      refused = next;
    }
    this.refusedSinceTaken.set(table, (this.refusedSinceTaken.get(table) ?? 0) + found.length);
    // Views into the rows' own memory until here, which is freed once the write is done.
    return found.sort((a, b) => a.from - b.from).map(({ lines, reason }) => ({ table, line: Buffer.from(lines[0]!), reason }));
  }
}

/**
 * The rows of every partition's chunks, written together: while one insert is in flight, and
 * for at least `minIntervalMs` after the previous one started, the chunks that finish wait and go
 * into the next one, which starts early once `maxRowsPerInsert` rows wait (partitions that
 * process ahead of their inserts would otherwise pause, and their rows would pile up in memory).
 * ClickHouse makes a part per table per insert and merges parts in the background, rewriting
 * each row several times over: a few large inserts keep that work small where one per chunk
 * would cost it more CPU than the inserts themselves.
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
  // Rows with more than MOST_REFUSED_ROWS refused among themselves, by the table: from then on that
  // table's rows are only tried whole. Halved afresh on every attempt, they cost a hundred inserts
  // every few seconds for as long as they wait, and whether the table or the rows are at fault,
  // they wait for someone to mend one or the other. Rows stopped by earlier writes' refusals are
  // halved again once the table takes rows, and their own few refused ones go to dead letters.
  private readonly tripped = new WeakMap<RowBuffer, string>();
  private readonly finder: RefusedRowsFinder;

  constructor(clickhouse: ClickHouse, options: { maxRowsPerInsert: number; minIntervalMs?: number; quietIntervalMs?: number }) {
    const finder = new RefusedRowsFinder(clickhouse);
    this.finder = finder;
    const insertWhole: InsertTable = async (table, rows) => {
      await clickhouse.insertEncoded(table, rows);
      if (rows.length > 0) finder.taken(table);
      return NONE_REFUSED;
    };
    this.commit = new GroupCommit<RowBuffer>(
      async (buffers) => {
        try {
          await writeTables(RowBuffer.concat(buffers), insertWhole);
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
   * ClickHouse refused for their content and did not take (see RefusedRowsFinder), for the
   * caller to keep elsewhere. Rows written already resolve at once, with the same answer.
   */
  async write(rows: RowBuffer): Promise<readonly RefusedRow[]> {
    if (rows.size === 0) return NONE_REFUSED;
    const done = this.written.get(rows);
    if (done) return done;
    let refused = NONE_REFUSED;
    if (this.refused.has(rows)) refused = await this.writeAlone(rows);
    else await this.commit.submit(rows);
    this.written.set(rows, refused);
    rows.release();
    return refused;
  }

  /**
   * Writes the rows now, in inserts of their own, but for those ClickHouse refuses for their
   * content, which it returns (see RefusedRowsFinder); neither releases them nor remembers them
   * as written. Also for rows outside the partitions' flow, such as the person outbox's, which
   * so count towards the same limit.
   */
  async writeAlone(rows: RowBuffer): Promise<readonly RefusedRow[]> {
    const tripped = this.tripped.get(rows);
    try {
      return await writeTables(rows, (table, tableRows) => this.finder.insert(table, tableRows, table === tripped));
    } catch (error) {
      if (error instanceof TableRefusing && error.byTheseRows) this.tripped.set(rows, error.table);
      throw error;
    }
  }
}
