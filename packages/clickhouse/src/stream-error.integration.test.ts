import { loadConfig } from '@tributary/config';
import { ClickHouseError, createClickHouse } from './client.js';
import { sql } from './sql.js';

const clickhouse = createClickHouse(loadConfig());
afterAll(() => clickhouse.close());

// Enough rows that ClickHouse has sent some before the failing one: the error then comes as the
// answer's last line rather than as the response's status.
const failingHalfWay = sql`SELECT number, throwIf(number = 300000) AS failed FROM system.numbers LIMIT 400000 SETTINGS max_block_size = 1000`;

describe('a statement that fails after rows were sent', () => {
  it('raises ClickHouse error, with its code and text, from a JSON stream', async () => {
    const read = async () => {
      for await (const rows of clickhouse.stream<{ number: string }>(failingHalfWay)) expect(rows.length).toBeGreaterThan(0);
    };
    const error = await read().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClickHouseError);
    expect((error as ClickHouseError).code).toBe(395);
    expect((error as ClickHouseError).message).toMatch(/^Code: 395, .*throwIf/);
  });
});
