import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { QueryService } from '../src/query/query-service.js';
import type { InsightCache } from '../src/query/insight-cache.js';

/**
 * The query service on chdb's in-process ClickHouse 26, for questions that name no cohort or
 * action, without the Redis cache: every answer is computed, as the real cache does for a question
 * it has not seen.
 */
export function chdbQueryService(clickhouse: ChdbClickHouse): QueryService {
  const noCohorts = { definitions: async () => [], memberDistinctIds: async () => [], versions: async () => [], idsByName: async () => [] };
  const noActions = { definitions: async () => [] };
  const cache = { answer: (_project: unknown, _request: unknown, _mode: unknown, compute: () => Promise<object>) => compute() } as unknown as InsightCache;
  return new QueryService({ clickhouse, cache, limits: { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 }, cohorts: noCohorts, actions: noActions, experiments: { get: async () => null } });
}
