import { randomInt } from 'node:crypto';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { QueryService } from '../src/query/query-service.js';
import type { InsightCache } from '../src/query/insight-cache.js';
import { insertFixture } from './insights-oracle/cases.js';
import { LEAK, PATHS_CASES, buildPathsFixture, expectedPaths } from './insights-oracle/paths-cases.js';

/**
 * The paths oracle (`insights-oracle/paths-cases.ts`) on a current ClickHouse (chdb's in-process
 * 26.x): the statements the query service prints for it must give the reference's edges, as they
 * do on 18.16 (`paths-oracle.integration.test.ts`).
 */
const TEAM = 900_000_000 + randomInt(90_000_000);
const fixture = buildPathsFixture();
const noCohorts = { definitions: async () => [], memberDistinctIds: async () => [], versions: async () => [], idsByName: async () => [] };
const noActions = { definitions: async () => [] };
let clickhouse: ChdbClickHouse;
let service: QueryService;
beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
  await insertFixture(clickhouse, TEAM, fixture);
  await insertFixture(clickhouse, TEAM + 1, buildPathsFixture({ other: true }));
  const cache = { answer: (_project: unknown, _request: unknown, _mode: unknown, compute: () => Promise<object>) => compute() } as unknown as InsightCache;
  service = new QueryService({ clickhouse, cache, limits: { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 }, cohorts: noCohorts, actions: noActions, experiments: { get: async () => null } });
});
afterAll(() => clickhouse.close());

describe('PathsQuery agrees with the reference on ClickHouse 26', () => {
  it.each(PATHS_CASES)('%s', async (_name, request) => {
    const answer = (await service.run({ id: TEAM, timezone: 'UTC' }, request, new AbortController().signal)) as { results: unknown[] };
    const expected = expectedPaths(fixture, request);
    expect(answer.results).toEqual(expected);
    expect(JSON.stringify(answer.results)).not.toMatch(LEAK);
  });

  it('the cases have edges to compare', () => {
    expect(PATHS_CASES.filter(([, request]) => expectedPaths(fixture, request).length > 0)).toHaveLength(PATHS_CASES.length);
  });
});
