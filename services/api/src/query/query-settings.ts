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
    // A GROUP BY of many keys (per person: funnels, retention, lifecycle, active users), or of a
    // few keys with large states, is aggregated two-level, so its result comes in 256 blocks, not
    // one: on 18.16 a subquery's GROUP BY is never two-level unless external aggregation is on, and
    // its one block of every person's arrays made each array function after it map and fault in
    // tens of megabytes at once. At 5M events the funnel's statement took 2.2 s in one block and
    // 0.95 s in buckets (bench/README). Spilling starts past twice the memory limit, which stops a
    // statement first: this only allows two-level aggregation, it never writes to disk.
    group_by_two_level_threshold: 10_000,
    group_by_two_level_threshold_bytes: 1024 * 1024,
    max_bytes_before_external_group_by: 2 * limits.queryMaxMemoryBytes,
    // ClickHouse's defaults, stated so that a server profile set looser elsewhere does not loosen
    // them: the printed statement's size and shape, before and after aliases are expanded.
    max_query_size: 262_144,
    max_ast_depth: 1_000,
    max_ast_elements: 50_000,
    max_expanded_ast_elements: 500_000,
    output_format_json_quote_64bit_integers: 0,
  };
}
