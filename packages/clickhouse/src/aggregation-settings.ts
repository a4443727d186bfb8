/**
 * Settings that make a GROUP BY of many keys (per person: funnels, retention, lifecycle, active
 * users, cohorts), or of a few keys with large states, aggregate two-level, so that its result
 * comes in 256 blocks rather than one. On 18.16 a subquery's GROUP BY is never two-level unless
 * external aggregation is on, and one block of every person's arrays makes each array function
 * after it allocate (and fault in) its whole result at once. Spilling starts past twice the
 * statement's memory limit, which stops it first: these only allow two-level aggregation, they
 * never write to disk.
 */
export function bucketedAggregation(maxMemoryBytes: number): Record<string, number> {
  return {
    group_by_two_level_threshold: 10_000,
    // Low, because 18.16 counts only part of groupArray's state toward it.
    group_by_two_level_threshold_bytes: 1024 * 1024,
    max_bytes_before_external_group_by: 2 * maxMemoryBytes,
  };
}
