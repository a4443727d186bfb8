import { randomInt } from 'node:crypto';
import { createClickHouse, Sql } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';
import { queryClickHouseSettings } from '../src/query/query-settings.js';

/**
 * The query endpoint's settings on the stack's ClickHouse: a GROUP BY of many keys comes out in
 * buckets, not one block of every key's arrays (which every array function after it copies whole),
 * and aggregation still never spills to disk before the memory limit stops it.
 */
const config = loadConfig({}, {}, 'api');
const clickhouse = createClickHouse(loadConfig());
const TABLE = `two_level_probe_${randomInt(1_000_000_000)}`;
const KEYS = 20_000;
/** Rows per key: 150 each, 3M in all, 24 MB of values when gathered. */
const ROWS = KEYS * 150;

beforeAll(async () => {
  await clickhouse.command(Sql.trusted(`CREATE TABLE ${TABLE} (k UInt32, v UInt64) ENGINE = MergeTree ORDER BY v`));
  await clickhouse.command(Sql.trusted(`INSERT INTO ${TABLE} SELECT number % ${KEYS}, number FROM numbers(${ROWS})`));
});
afterAll(async () => {
  await clickhouse.command(Sql.trusted(`DROP TABLE IF EXISTS ${TABLE}`));
  await clickhouse.close();
});

/** The largest block a GROUP BY of arrays (per key, or per one key in `every`) comes out in, and how many keys it gave. */
async function blocks(settings: Record<string, number>, every = 1): Promise<{ largest: number; keys: number }> {
  const statement = `SELECT max(b), count() FROM (SELECT blockSize() AS b FROM (SELECT intDiv(k, ${every}) AS g, groupArray(v) AS vs FROM ${TABLE} GROUP BY g))`;
  const { data } = await clickhouse.queryCompact(Sql.trusted(statement), { settings });
  return { largest: Number(data[0]![0]), keys: Number(data[0]![1]) };
}

describe("the query endpoint's ClickHouse settings", () => {
  it('aggregate a GROUP BY of many keys two-level, into blocks of a few hundred keys', async () => {
    const settings = queryClickHouseSettings(config);
    const { largest, keys } = await blocks(settings);
    expect(keys).toBe(KEYS);
    expect(largest).toBeLessThan(KEYS / 10);
  });

  it('and a GROUP BY of fewer keys with megabytes of state the same way', async () => {
    const settings = queryClickHouseSettings(config);
    const { largest, keys } = await blocks(settings, 20);
    expect(keys).toBe(KEYS / 20);
    expect(largest).toBeLessThan(KEYS / 20 / 10);
  });

  it('where 18.16 would give every key in one block without them', async () => {
    const { group_by_two_level_threshold: _threshold, max_bytes_before_external_group_by: _external, ...rest } = queryClickHouseSettings(config);
    expect(await blocks(rest)).toEqual({ largest: KEYS, keys: KEYS });
  });

  it('never spill aggregation to disk: the memory limit stops a statement first', () => {
    const settings = queryClickHouseSettings(config);
    expect(settings.max_bytes_before_external_group_by).toBeGreaterThan(settings.max_memory_usage!);
  });
});
