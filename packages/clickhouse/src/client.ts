import type { Readable } from 'node:stream';
import { createClient, ClickHouseLogLevel, type ClickHouseClient } from '@clickhouse/client';
import type { Config } from '@tributary/config';
import { bracketDepth, ident, sql, type Sql } from './sql.js';
import type { Cell, TabSeparatedRows } from './tab-separated.js';

export type ClickHouseConfig = Pick<Config, 'clickhouseUrl' | 'clickhouseDatabase' | 'clickhouseUser' | 'clickhousePassword'>;

/** The error a failed statement raises; 18.16 gives no `.code`, so it is parsed from the message. */
export class ClickHouseError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ClickHouseError';
  }
}

function wrapError(error: unknown): ClickHouseError {
  if (error instanceof ClickHouseError) return error;
  const message = error instanceof Error ? error.message : String(error);
  // The driver takes the code out of a message it could parse (one naming an upper-case type in
  // brackets, as `Array(UUID)` does), leaving it only on the error; a Node error's code is a name.
  const own = String((error as { code?: unknown } | null)?.code ?? '');
  const code = /Code: (\d+)/.exec(message)?.[1] ?? (/^\d+$/.test(own) ? own : undefined);
  // The client's own error stays the cause: a refused or reset connection says ClickHouse is away.
  return new ClickHouseError(message, code === undefined ? null : Number(code), { cause: error });
}

/**
 * ClickHouse's codes for a statement that is wrong about its data rather than broken: types
 * that do not fit, text that does not parse as the date or number it is compared with, a pattern
 * RE2 cannot compile, an expression too large. Where a client wrote the expressions or filters of
 * a query, these are its mistake, answered with a 400 that says which kind.
 */
const INPUT_ERRORS: Record<number, string> = {
  6: 'a value cannot be read as the type it is compared with',
  27: 'a value cannot be read as the type it is compared with',
  38: 'a value cannot be read as a date',
  41: 'a value cannot be read as a date and time',
  72: 'a value cannot be read as a number',
  70: 'a value cannot be converted to the type it is compared with',
  321: 'a value is out of range for its type',
  43: 'the types of an expression do not fit (text used as a number, say)',
  53: 'the types of an expression do not fit (text used as a number, say)',
  386: 'the values compared have no common type',
  44: 'a column cannot be used that way',
  15: 'two columns of one select have the same name: give one an alias',
  59: 'a where expression is not a condition (it must compare or test something, giving true or false)',
  34: 'a function has too many arguments',
  35: 'a function has too few arguments',
  42: 'a function has the wrong number of arguments',
  36: 'a function argument is not valid',
  49: 'a function cannot compute with these arguments',
  69: 'a function argument is out of range',
  153: 'an integer division by zero',
  427: 'a regular expression uses syntax ClickHouse (RE2) cannot compile',
  128: 'an array is too large',
  131: 'a string is too large',
  167: 'the query nests too deeply',
  168: 'the query is too large',
  306: 'the query nests too deeply',
  1: 'the query uses something ClickHouse does not support in this form',
  48: 'the query uses something ClickHouse does not support in this form',
  8: 'a column the query names is not there',
  10: 'a column the query names cannot be computed where it is used (a RIGHT or FULL JOIN reading a left-hand field, say)',
  16: 'a column the query names is not there',
  47: 'a name the query uses is not a column here',
  352: 'a name the query uses could mean more than one column',
  46: 'a function the query calls does not exist in this ClickHouse',
  50: 'a type the query names does not exist',
  51: 'the query reads no column',
  62: 'the query is not valid SQL for this ClickHouse',
  80: 'the query is not valid for this ClickHouse',
  179: 'one alias names two expressions',
  184: 'an aggregate function is used inside another or where aggregates are not allowed',
  215: 'a column is neither aggregated nor in GROUP BY',
  190: 'arrays of different sizes are combined',
  20: 'the two sides of IN or a UNION have different numbers of columns',
  9: 'the two sides of an expression have different numbers of values',
  125: 'a scalar subquery gives more than one row or column',
  135: 'an array or tuple index is 0: indexes start at 1',
  264: 'the two sides of the join cannot be joined that way',
  403: 'the ON clause of a join is not an equality of the two sides',
  182: 'PREWHERE cannot be used here',
  191: 'an IN list or subquery is too large',
  158: 'the query reads more rows than a query may',
  307: 'the query reads more bytes than a query may',
  396: 'the query reads more rows or bytes than a query may',
  160: 'the query would run longer than a query may',
};

/** Failures ClickHouse gives a generic code (a library's exception) that still come from the query alone. */
const INPUT_ERROR_MESSAGES: [RegExp, string][] = [[/Cannot load time zone/, 'a time zone the query names is not one ClickHouse knows']];

/** ClickHouse's own sentence, without its code, exception names and stack: what the query did wrong. */
function clickhouseSentence(message: string): string {
  const sentence = message
    .replace(/^[\s\S]*?DB::Exception: /, '')
    .replace(/, e\.what\(\) = [\s\S]*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return sentence.length > 300 ? `${sentence.slice(0, 300)}…` : sentence;
}

/**
 * ClickHouse's codes for an insert refused for what its rows hold: a field that does not parse
 * as its column's type or is out of its range, a row of the wrong shape, or a materialized view
 * on the table that throws for a row (throwIf). Sent again, the same rows fail the same way;
 * rows without the offending ones go in. Codes that may mean the server is short of something
 * (memory, parts, a connection cut mid-body) are not among them: those pass.
 */
const REFUSED_ROWS_CODES = new Set([6, 26, 27, 38, 41, 53, 70, 72, 117, 131, 321, 395]);

/** Whether ClickHouse refused an insert for its rows' content rather than being unable to take it now. */
export function isRefusedRows(error: unknown): boolean {
  return error instanceof ClickHouseError && error.code !== null && REFUSED_ROWS_CODES.has(error.code);
}

/**
 * The deepest bracket nesting a statement may have. ClickHouse 18.16's parser has no depth limit
 * (`max_parser_depth` came in 20.1; `max_ast_depth` is checked only after parsing): it recurses
 * per level and, near a thousand levels, overflows its stack and the whole server dies without a
 * log line. Statements built from a client's input are refused here, before they are sent, with
 * the code ClickHouse itself gives an expression too deep. The edge refuses such input first
 * (HogQL's `PARSE_LIMITS`); this keeps any other path from taking the store down.
 */
export const MAX_STATEMENT_NESTING = 300;

function assertParsable(statement: Sql): void {
  const depth = bracketDepth(statement.text);
  if (depth > MAX_STATEMENT_NESTING) {
    throw new ClickHouseError(`Code: 167, not sent: the statement nests brackets ${depth} deep, past the ${MAX_STATEMENT_NESTING} every ClickHouse version parses safely`, 167);
  }
}

/** What was wrong with a query a client's input shaped, when ClickHouse refused it for its data; null for any other failure. */
export function queryInputProblem(error: unknown): string | null {
  if (!(error instanceof ClickHouseError) || error.code === null) return null;
  const kind = INPUT_ERRORS[error.code] ?? INPUT_ERROR_MESSAGES.find(([pattern]) => pattern.test(error.message))?.[1];
  return kind === undefined ? null : `${kind} (ClickHouse: ${clickhouseSentence(error.message)})`;
}

/**
 * A keep-alive connection ClickHouse closed just as it was reused resets before any answer (a
 * process starved of CPU can reuse one past the server's timeout). A read is safe to send again.
 */
/**
 * Whether the client stopped waiting for a statement (its request timeout) rather than ClickHouse
 * failing it: ClickHouse goes on running such a statement until it is killed.
 */
export function isRequestTimeout(error: unknown): boolean {
  const cause = error instanceof ClickHouseError ? error.cause : error;
  return error instanceof Error && (error as ClickHouseError).code == null && cause instanceof Error && /^Timeout error\.?$/.test(cause.message);
}

const isConnectionReset = (error: unknown) => ['ECONNRESET', 'EPIPE'].includes(String((error as NodeJS.ErrnoException | null)?.code));

/** A query's answer as ClickHouse's JSONCompact gives it: column names and types, rows as arrays. */
export interface CompactResult {
  meta: { name: string; type: string }[];
  data: unknown[][];
}

export interface CompactQueryOptions {
  /** ClickHouse settings for this statement alone (limits, read-only). */
  settings?: Record<string, string | number>;
  /** Lets the caller kill the statement in ClickHouse by id (`kill`). */
  queryId?: string;
}

/** Narrow interface the services use: SQL goes in only as `Sql` built by `sql.ts` (or the HogQL printer). */
export interface ClickHouse {
  query<Row>(statement: Sql): Promise<Row[]>;
  queryCompact(statement: Sql, options?: CompactQueryOptions): Promise<CompactResult>;
  /** Stops the running statements whose `queryId` starts with `prefix`, whoever's connections run them. */
  kill(prefix: string): Promise<void>;
  /** A statement's rows as they arrive, a chunk at a time, for results too large to hold at once. */
  stream<Row>(statement: Sql, options?: CompactQueryOptions): AsyncIterable<Row[]>;
  /**
   * A statement's rows as TabSeparatedRaw lines, each a Buffer ending with its newline, a chunk at
   * a time: for results read by the million, where making an object of each row costs more than
   * ClickHouse's work. No field is escaped, so the statement must keep tabs and newlines out of them.
   */
  streamLines(statement: Sql, options?: CompactQueryOptions): AsyncIterable<Buffer[]>;
  command(statement: Sql, options?: CompactQueryOptions): Promise<void>;
  insert<Row extends object>(table: string, columns: readonly (keyof Row & string)[], rows: readonly Row[]): Promise<void>;
  /** Rows already encoded (see TabSeparatedRows); the high-volume path. */
  insertEncoded<Row extends Record<keyof Row, Cell>>(table: string, rows: TabSeparatedRows<Row>): Promise<void>;
  /**
   * A statement's answer in ClickHouse's Native format, for copying rows exactly (backups).
   * ClickHouse holds the whole answer until the statement has finished (`wait_end_of_query`), so
   * a statement that fails half-way is an error here, never a stream cut short.
   */
  exportNative(statement: Sql): Promise<Readable>;
  /** Inserts rows in Native format, as `exportNative` gave them, into these columns of a table. */
  importNative(table: string, columns: readonly string[], body: Readable): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

function connect(config: ClickHouseConfig, database: string | undefined, requestTimeoutMs: number): ClickHouseClient {
  return createClient({
    url: config.clickhouseUrl,
    username: config.clickhouseUser,
    password: config.clickhousePassword,
    ...(database === undefined ? {} : { database }),
    request_timeout: requestTimeoutMs,
    // Errors are thrown to the caller, which logs them once through pino.
    log: { level: ClickHouseLogLevel.OFF },
    // Idle sockets are dropped on a timer that runs late in a busy process; checking their age
    // when one is reused as well keeps most reuses clear of ClickHouse's 3 s keep-alive timeout.
    keep_alive: { eagerly_destroy_stale_sockets: true },
    clickhouse_settings: { date_time_input_format: 'best_effort' },
  });
}

/** Runs `work` with ClickHouse's errors wrapped as ClickHouseError. */
async function wrapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw wrapError(error);
  }
}

/** An insert's table and columns, checked: the client puts them into the INSERT text. */
function insertColumns(table: string, columns: readonly string[]): [string, ...string[]] {
  for (const name of [table, ...columns]) ident(name);
  const [first, ...rest] = columns;
  if (first === undefined) throw new Error(`insert into ${table} names no columns`);
  return [first, ...rest];
}

/**
 * A JSONEachRow line. ClickHouse ends an answer it could not finish with the error's text after
 * the rows it sent: that line is raised as the error it is, not as JSON that failed to parse.
 */
function jsonRow<Row>(text: string): Row {
  if (text.startsWith('Code: ')) throw wrapError(new Error(text.trim()));
  return JSON.parse(text) as Row;
}

/** TabSeparatedRaw lines from the bytes of an answer, each a Buffer ending with its newline, a chunk at a time. */
async function* linesOf(stream: AsyncIterable<Buffer>): AsyncIterable<Buffer[]> {
  let rest: Buffer | null = null;
  for await (const received of stream) {
    const chunk: Buffer = rest ? Buffer.concat([rest, received]) : received;
    const lines: Buffer[] = [];
    let start = 0;
    for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
      lines.push(chunk.subarray(start, end + 1));
      start = end + 1;
    }
    rest = start < chunk.length ? chunk.subarray(start) : null;
    if (lines.length > 0) yield lines;
  }
  // ClickHouse ends an answer it could not finish with the error's text after the rows it
  // sent: the caller, which knows its lines' shape, tells such a line apart.
  if (rest) throw new Error(`ClickHouse's answer ended inside a line: ${rest.toString().slice(0, 500)}`);
}

export function createClickHouse(config: ClickHouseConfig, options: { requestTimeoutMs?: number; database?: string | null } = {}): ClickHouse {
  const database = options.database === null ? undefined : (options.database ?? config.clickhouseDatabase);
  const client = connect(config, database, options.requestTimeoutMs ?? 30_000);
  /**
   * The one way a statement is sent: checked before it goes, with its settings and id; the
   * caller's work with it runs with ClickHouse's errors wrapped as ClickHouseError.
   */
  const send = async <T>(statement: Sql, options: CompactQueryOptions, work: (request: { query: string; clickhouse_settings?: Record<string, string | number>; query_id?: string }) => Promise<T>): Promise<T> => {
    assertParsable(statement);
    return wrapped(() => work({ query: statement.text, ...(options.settings && { clickhouse_settings: options.settings }), ...(options.queryId && { query_id: options.queryId }) }));
  };
  /** A streaming answer: the first chunk waits for the request, every chunk's error is wrapped. */
  async function* streamed<T>(start: () => Promise<AsyncIterable<T>>): AsyncIterable<T> {
    try {
      yield* await start();
    } catch (error) {
      throw wrapError(error);
    }
  }
  return {
    query<Row>(statement: Sql): Promise<Row[]> {
      return send(statement, {}, (request) => {
        const read = async () => (await client.query({ ...request, format: 'JSONEachRow' })).json<Row>();
        return read().catch((error: unknown) => {
          if (isConnectionReset(error)) return read();
          throw error;
        });
      });
    },
    queryCompact(statement: Sql, options: CompactQueryOptions = {}): Promise<CompactResult> {
      return send(statement, options, async (request) => {
        const { meta, data } = await (await client.query({ ...request, format: 'JSONCompact' })).json<unknown[]>();
        return { meta: meta ?? [], data };
      });
    },
    stream<Row>(statement: Sql, options: CompactQueryOptions = {}): AsyncIterable<Row[]> {
      return streamed(() =>
        send(statement, options, async (request) => {
          const result = await client.query({ ...request, format: 'JSONEachRow' });
          return (async function* () {
            for await (const rows of result.stream<Row>()) yield rows.map((row) => jsonRow<Row>(row.text));
          })();
        }),
      );
    },
    streamLines(statement: Sql, options: CompactQueryOptions = {}): AsyncIterable<Buffer[]> {
      return streamed(() =>
        send(statement, options, async (request) => {
          const { stream } = await client.exec({ ...request, query: `${request.query}\nFORMAT TabSeparatedRaw` });
          return linesOf(stream as AsyncIterable<Buffer>);
        }),
      );
    },
    kill(prefix: string): Promise<void> {
      return send(sql`KILL QUERY WHERE startsWith(query_id, ${prefix}) ASYNC`, {}, async (request) => void (await client.command(request)));
    },
    command(statement: Sql, options: CompactQueryOptions = {}): Promise<void> {
      return send(statement, options, async (request) => void (await client.command(request)));
    },
    async insert<Row extends object>(table: string, columns: readonly (keyof Row & string)[], rows: readonly Row[]): Promise<void> {
      if (rows.length === 0) return;
      // 18.16 ignores the DEFAULTs of omitted JSONEachRow fields, so columns are always explicit.
      await wrapped(() => client.insert({ table, values: rows as Row[], format: 'JSONEachRow', columns: insertColumns(table, columns) }));
    },
    async insertEncoded<Row extends Record<keyof Row, Cell>>(table: string, rows: TabSeparatedRows<Row>): Promise<void> {
      if (rows.length === 0) return;
      await wrapped(() => client.insert({ table, values: rows.stream(), format: 'TabSeparated', columns: insertColumns(table, rows.columns) }));
    },
    async exportNative(statement: Sql): Promise<Readable> {
      assertParsable(statement);
      try {
        const { stream } = await client.exec({ query: `${statement.text}\nFORMAT Native`, clickhouse_settings: { wait_end_of_query: 1 } });
        return stream;
      } catch (error) {
        throw wrapError(error);
      }
    },
    async importNative(table: string, columns: readonly string[], body: Readable): Promise<void> {
      if (columns.length === 0) throw new Error(`insert into ${table} names no columns`);
      const names = [ident(table), ...columns.map(ident)].map((name) => name.text);
      try {
        const { stream } = await client.exec({ query: `INSERT INTO ${names[0]} (${names.slice(1).join(', ')}) FORMAT Native`, values: body });
        stream.resume();
        await new Promise((resolve, reject) => stream.once('end', resolve).once('error', reject));
      } catch (error) {
        throw wrapError(error);
      }
    },
    async ping(): Promise<boolean> {
      const result = await client.ping();
      return result.success;
    },
    close: () => client.close(),
  };
}

