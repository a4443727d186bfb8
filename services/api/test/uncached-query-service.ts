import type { ClickHouse } from '@tributary/clickhouse';
import type { InsightCache } from '../src/query/insight-cache.js';
import { QueryService } from '../src/query/query-service.js';

/** The query service on `clickhouse` (chdb's, say) without Redis, cohorts or actions: every answer computed, as the real cache does for a question it has not seen. */
export function uncachedQueryService(clickhouse: ClickHouse): QueryService {
  const cache = { answer: (_project: unknown, _request: unknown, _mode: unknown, compute: () => Promise<object>) => compute() } as unknown as InsightCache;
  const cohorts = { definitions: async () => [], memberDistinctIds: async () => [], versions: async () => [], idsByName: async () => [] };
  return new QueryService({ clickhouse, cache, limits: { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 }, cohorts, actions: { definitions: async () => [] }, experiments: { get: async () => null } });
}
