import type { ClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import type { InsightCache } from '../src/query/insight-cache.js';
import { QueryService, type QueryServiceDeps } from '../src/query/query-service.js';
import { insertFixture } from './insights-oracle/cases.js';
import type { Fixture } from './insights-oracle/fixture.js';

/** The limits the tests' query services run under unless a test is about them. */
export const TEST_QUERY_LIMITS: QueryServiceDeps['limits'] = { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 };

/**
 * The query service on `clickhouse` (chdb's, say) without Redis, cohorts, actions or experiments:
 * every answer computed, as the real cache does for a question it has not seen. `overrides`
 * replace any of its parts for what a test is about.
 */
export function uncachedQueryService(clickhouse: ClickHouse, overrides: Partial<QueryServiceDeps> = {}): QueryService {
  const cache = { answer: (_project: unknown, _request: unknown, _mode: unknown, compute: () => Promise<object>) => compute() } as unknown as InsightCache;
  const cohorts = { definitions: async () => [], memberDistinctIds: async () => [], versions: async () => [], idsByName: async () => [] };
  return new QueryService({ clickhouse, cache, limits: TEST_QUERY_LIMITS, cohorts, actions: { definitions: async () => [] }, experiments: { get: async () => null }, ...overrides });
}

/**
 * An oracle's two projects on chdb's in-process ClickHouse 26, loaded before the file's tests:
 * `ours` as project `team`, `theirs` (sharing its distinct ids and persons) as `team + 1`. `ask`
 * runs a request for `team`, in UTC, through the uncached query service.
 */
export function useChdbOracle(team: number, ours: Fixture, theirs: Fixture): { ask: (request: object) => Promise<any> } {
  let clickhouse: ChdbClickHouse;
  let service: QueryService;
  beforeAll(async () => {
    await loadHogQLParser();
    clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
    await insertFixture(clickhouse, team, ours);
    await insertFixture(clickhouse, team + 1, theirs);
    service = uncachedQueryService(clickhouse);
  });
  afterAll(() => clickhouse.close());
  return { ask: async (request) => service.run({ id: team, timezone: 'UTC' }, request as never, new AbortController().signal) };
}
