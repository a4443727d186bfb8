import { MaterializedColumnLimitError, Sql, createClickHouse, materializedColumnName, migrateClickHouse, onCluster, readMaterializedColumns, topologyOf, type ClickHouse } from '@tributary/clickhouse';
import { PropertyReadCounter, createRedis, type Redis } from '@tributary/redis';
import { EVENT_ROW_COLUMNS, eventRow, testConfig, uniqueName } from '@tributary/test-support';
import { autoMaterialize, listProperties, materializeProperties, type PropertiesDeps } from './materialized-properties.js';

/**
 * `tributary properties:list`, `:materialize` and `:auto` against the real stores: ClickHouse in a
 * database of its own (columns added to the shared events table would change it under every other
 * test), and read counts in a Redis hash of its own.
 */
const config = testConfig({ clickhouseDatabase: uniqueName('tributary_props') });
const topology = topologyOf(config);
const readsKey = uniqueName('property-reads');
let clickhouse: ClickHouse;
let redis: Redis;
let deps: PropertiesDeps;

beforeAll(async () => {
  await migrateClickHouse(config);
  clickhouse = createClickHouse(config, { requestTimeoutMs: 120_000 });
  redis = createRedis(config);
  deps = { clickhouse, redis, topology, maxColumns: 3, mutationTimeoutMs: 120_000, readsKey };
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, [eventRow(1, 'a', '$pageview', '2024-01-01 00:00:00', { $browser: 'Chrome', $os: 'Mac' })]);
  const counter = new PropertyReadCounter(redis, { key: readsKey });
  for (let i = 0; i < 30; i++) counter.record([{ column: 'properties', key: '$browser' }]);
  for (let i = 0; i < 20; i++) counter.record([{ column: 'properties', key: '$os' }, { column: 'person_properties', key: 'email' }]);
  counter.record([{ column: 'properties', key: 'rare' }]);
  await counter.flush();
}, 300_000);

afterAll(async () => {
  await redis.del(readsKey);
  redis.disconnect();
  await clickhouse.command(Sql.trusted(`DROP DATABASE IF EXISTS ${config.clickhouseDatabase}${onCluster(topology)}`));
  await clickhouse.close();
});

test('properties:list gives the counted reads, most read first, none materialized yet', async () => {
  expect(await listProperties(deps, 10)).toEqual([
    { column: 'properties', key: '$browser', reads: 30, materialized: null },
    { column: 'person_properties', key: 'email', reads: 20, materialized: null },
    { column: 'properties', key: '$os', reads: 20, materialized: null },
    { column: 'properties', key: 'rare', reads: 1, materialized: null },
  ]);
});

test('properties:materialize adds the column once; running it again only fills it again', async () => {
  const name = materializedColumnName('properties', '$browser');
  expect(await materializeProperties(deps, [{ column: 'properties', key: '$browser' }])).toEqual([{ column: 'properties', key: '$browser', name, added: true }]);
  expect(await materializeProperties(deps, [{ column: 'properties', key: '$browser' }])).toEqual([{ column: 'properties', key: '$browser', name, added: false }]);
  const [row] = await clickhouse.query<{ v: string }>(Sql.trusted(`SELECT ${name} AS v FROM events`));
  expect(row?.v).toBe('"Chrome"');
  expect((await listProperties(deps, 10))[0]).toEqual({ column: 'properties', key: '$browser', reads: 30, materialized: name });
});

test('properties:auto materializes the most read properties above the threshold, within the column limit', async () => {
  const done = await autoMaterialize(deps, { topN: 5, minReads: 10 });
  // Equally read properties go by key.
  expect(done.map(({ column, key }) => ({ column, key }))).toEqual([
    { column: 'properties', key: '$os' },
    { column: 'person_properties', key: 'email' },
  ]);
  const existing = await readMaterializedColumns(clickhouse);
  expect([...existing.properties.keys()].sort()).toEqual(['$browser', '$os']);
  expect([...existing.person_properties.keys()]).toEqual(['email']);
  // The limit (3) is reached: nothing more is added, by hand or automatically.
  expect(await autoMaterialize(deps, { topN: 5, minReads: 1 })).toEqual([]);
  await expect(materializeProperties(deps, [{ column: 'properties', key: 'rare' }])).rejects.toThrow(MaterializedColumnLimitError);
});
