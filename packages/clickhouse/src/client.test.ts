import { ClickHouseError, MAX_STATEMENT_NESTING, createClickHouse, queryInputProblem } from './client.js';
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
      expect(queryInputProblem(error)).toBe('the query nests too deeply');
    }
  });

  it('brackets inside a literal do not count', async () => {
    const error = await clickhouse.query(sql`SELECT ${'('.repeat(10_000)}`).catch((e: unknown) => e);
    expect((error as ClickHouseError).code).toBeNull();
  });
});
