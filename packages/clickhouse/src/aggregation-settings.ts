/**
 * Settings that make a GROUP BY of many keys (per person: funnels, retention, lifecycle, active
 * users, cohorts), or of a few keys with large states, aggregate two-level, so that its result
 * comes in 256 blocks rather than one. On 18.16 a subquery's GROUP BY is never two-level unless
 * external aggregation is on, and its one block of every person's arrays made each array function
 * after it map and fault in tens of megabytes at once: at 5M events the funnel's statement took
 * 2.2 s in one block and 0.95 s in buckets (bench/README). Spilling starts past twice the
 * statement's memory limit, which stops it first: these only allow two-level aggregation, they
 * never write to disk.
 */
export function bucketedAggregation(maxMemoryBytes: number): Record<string, number> {
  return {
    group_by_two_level_threshold: 10_000,
    // 18.16 counts only part of groupArray's state here: 8 MiB left 1,000 keys of 24 MB in one block.
    group_by_two_level_threshold_bytes: 1024 * 1024,
    max_bytes_before_external_group_by: 2 * maxMemoryBytes,
  };
}
