import { rmSync } from 'node:fs';
import { COMPOSE_CLICKHOUSE } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';
import type { ComposeClickHouse } from '@tributary/test-support/chdb-compose';
import { queryClickHouseSettings } from '../src/query/query-settings.js';

/**
 * The query endpoint's statements run, on docker-compose's ClickHouse (its files on chdb's 26.x),
 * as its query user with the settings the api sends, which its profile's constraints accept; and
 * the limits fail with the codes the query service turns into a 400 (query-service.ts).
 */
let server: ComposeClickHouse;
let dataDir: string;
beforeAll(async () => {
  const { createComposeData, openComposeClickHouse } = await import('@tributary/test-support/chdb-compose');
  dataDir = await createComposeData();
  server = openComposeClickHouse({ user: COMPOSE_CLICKHOUSE.query.user, dataDir });
});
afterAll(() => {
  server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const withSettings = (statement: string, settings: Record<string, number>) => `${statement} SETTINGS ${Object.entries(settings).map(([name, value]) => `${name} = ${value}`).join(', ')}`;
const codeOf = (statement: string) => {
  try {
    server.run(statement);
    return 'ok';
  } catch (error) {
    return (error as { code?: number | null }).code;
  }
};

test("the api's settings for every query statement, with the config's defaults (compose's) and with a thread limit", () => {
  const limits = loadConfig({}, {}, 'api');
  expect([limits.queryMaxExecutionTimeS, limits.queryMaxMemoryBytes]).toEqual([COMPOSE_CLICKHOUSE.query.maxExecutionTimeS, COMPOSE_CLICKHOUSE.query.maxMemoryBytes]);
  for (const settings of [queryClickHouseSettings(limits), queryClickHouseSettings({ ...limits, queryMaxThreads: 2 })]) {
    expect(server.run(withSettings(`SELECT count() FROM ${COMPOSE_CLICKHOUSE.database}.events`, settings))).toBe('0\n');
  }
});

test('a query past its time or memory limit fails with the code the query service answers 400 for', () => {
  const settings = queryClickHouseSettings(loadConfig({}, {}, 'api'));
  expect(codeOf(withSettings('SELECT count() FROM system.numbers', { ...settings, max_execution_time: 1 }))).toBe(159);
  expect(codeOf(withSettings('SELECT length(groupArray(number)) FROM numbers(100000000)', { ...settings, max_memory_usage: 10_000_000 }))).toBe(241);
});
