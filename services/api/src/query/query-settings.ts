import { bucketedAggregation } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';

export type QueryLimits = Pick<Config, 'queryMaxExecutionTimeS' | 'queryMaxMemoryBytes' | 'queryMaxThreads'>;

/**
 * The ClickHouse settings every query endpoint statement runs with. `readonly` 2 refuses any write
 * or DDL the printer could ever let through while still taking these settings. No `priority`:
 * 18.16 makes a lower-priority statement wait up to a second at every block while any higher one
 * runs, and under steady ingest that starved queries for minutes; threads, memory, time and the
 * per-project concurrency limit bound what a heavy query takes instead.
 */
export function queryClickHouseSettings(limits: QueryLimits): Record<string, number> {
  return {
    readonly: 2,
    max_execution_time: limits.queryMaxExecutionTimeS,
    max_memory_usage: limits.queryMaxMemoryBytes,
    ...(limits.queryMaxThreads > 0 && { max_threads: limits.queryMaxThreads }),
    ...bucketedAggregation(limits.queryMaxMemoryBytes),
    // ClickHouse's defaults, stated so that a server profile set looser elsewhere does not loosen
    // them: the printed statement's size and shape, before and after aliases are expanded.
    max_query_size: 262_144,
    max_ast_depth: 1_000,
    max_ast_elements: 50_000,
    max_expanded_ast_elements: 500_000,
    output_format_json_quote_64bit_integers: 0,
  };
}
