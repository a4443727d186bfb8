import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClickHouseError, MAX_STATEMENT_NESTING, createClickHouse, isRefusedRows, queryInputProblem } from './client.js';
import { Sql, sql } from './sql.js';

describe('statements ClickHouse 18.16 would die parsing', () => {
  // Nothing listens here: a statement that were sent would fail to connect instead.
  const clickhouse = createClickHouse({ clickhouseUrl: 'http://127.0.0.1:9', clickhouseDatabase: 'tributary', clickhouseUser: 'default', clickhousePassword: '' });
  afterAll(() => clickhouse.close());

  it('are refused before they are sent, with the code of an expression too deep, which routes answer as the client\'s 400', async () => {
    const deep = Sql.trusted(`SELECT ${'('.repeat(MAX_STATEMENT_NESTING + 1)}1${')'.repeat(MAX_STATEMENT_NESTING + 1)}`);
    for (const send of [() => clickhouse.query(deep), () => clickhouse.command(deep)]) {
      const error = await send().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ClickHouseError);
      expect((error as ClickHouseError).code).toBe(167);
      expect((error as ClickHouseError).message).toMatch(/not sent: the statement nests brackets 301 deep/);
      expect(queryInputProblem(error)).toMatch(/^the query nests too deeply/);
    }
  });

  it('brackets inside a literal do not count', async () => {
    const error = await clickhouse.query(sql`SELECT ${'('.repeat(10_000)}`).catch((e: unknown) => e);
    expect((error as ClickHouseError).code).toBeNull();
  });
});

describe('inserts refused for their rows', () => {
  it('are told apart from ClickHouse being short of something or away, which pass', async () => {
    const refused = (message: string) => isRefusedRows(new ClickHouseError(message, Number(/Code: (\d+)/.exec(message)?.[1] ?? Number.NaN)));
    expect(refused('Code: 41, e.displayText() = DB::Exception: Cannot read DateTime')).toBe(true);
    expect(refused('Code: 27, e.displayText() = DB::Exception: Cannot parse input: expected \\n before: \\textra')).toBe(true);
    expect(refused("Code: 395, e.displayText() = DB::Exception: Value passed to 'throwIf' function is non zero: while pushing to view v")).toBe(true);
    expect(refused('Code: 241, e.displayText() = DB::Exception: Memory limit (for query) exceeded')).toBe(false);
    expect(refused('Code: 252, e.displayText() = DB::Exception: Too many parts (300). Merges are processing significantly slower than inserts.')).toBe(false);
    expect(refused('Code: 210, e.displayText() = DB::NetException: Connection refused')).toBe(false);
    expect(isRefusedRows(new ClickHouseError('socket hang up', null))).toBe(false);
    expect(isRefusedRows(Object.assign(new Error('Code: 41'), { code: 41 }))).toBe(false);
  });

  it("errors of the query's own making name the kind and ClickHouse's sentence, without its code or stack; the server's own are not the query's", () => {
    const problem = (code: number, message: string) => queryInputProblem(new ClickHouseError(`Code: ${code}, e.displayText() = DB::Exception: ${message}, e.what() = DB::Exception`, code));
    expect(problem(215, 'Column event is not under aggregate function and not in GROUP BY.')).toBe('a column is neither aggregated nor in GROUP BY (ClickHouse: Column event is not under aggregate function and not in GROUP BY.)');
    expect(problem(1000, 'Exception: Cannot load time zone Mars/Base')).toMatch(/^a time zone the query names is not one ClickHouse knows \(ClickHouse: .*Mars\/Base\)$/);
    expect(problem(10, `Not found column x in block. ${'There are only columns: a, '.repeat(30)}`)).toMatch(/^a column the query names cannot be computed where it is used .*…\)$/);
    expect(problem(1000, 'Exception: Connection reset by peer')).toBeNull();
    expect(problem(209, 'Timeout exceeded while reading from socket')).toBeNull();
    expect(problem(999, 'ZooKeeper session expired')).toBeNull();
  });

  it("a select naming two columns alike is the client's query to fix, not the server's failure", () => {
    expect(queryInputProblem(new ClickHouseError("Code: 15, e.displayText() = DB::Exception: Column '1' already exists", 15))).toMatch(/same name/);
  });
});

describe('an error the driver parsed', () => {
  it("keeps ClickHouse's code, so a query's own mistake is still its 400", async () => {
    // 18.16's wording, naming `Array(UUID)`: the driver reads `(UUID)` as the error's type and keeps the code apart from the message.
    const server = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Code: 43, e.displayText() = DB::Exception: Types of array and 2nd argument of function has must be identical up to nullability. Passed: Array(UUID) and String., e.what() = DB::Exception\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const clickhouse = createClickHouse({ clickhouseUrl: `http://127.0.0.1:${port}`, clickhouseDatabase: 'tributary', clickhouseUser: 'default', clickhousePassword: '' });
    try {
      const error = await clickhouse.query(sql`SELECT 1`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ClickHouseError);
      expect((error as ClickHouseError).code).toBe(43);
      expect(queryInputProblem(error)).toMatch(/Types of array and 2nd argument of function has/);
    } finally {
      await clickhouse.close();
      server.close();
    }
  });
});
