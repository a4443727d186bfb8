import { bucketedAggregation } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';
import { calculationSettings } from '../src/cohort-calculation/cohort-members-reader.js';

/** A cohort's members query groups by person as the query endpoint's insights do: in buckets, never spilled to disk. */
test("a cohort calculation aggregates two-level, as the query endpoint's statements do, within its memory limit", () => {
  const config = loadConfig();
  const settings = calculationSettings(config);
  expect(settings).toMatchObject(bucketedAggregation(config.queryMaxMemoryBytes));
  expect(settings.max_bytes_before_external_group_by).toBeGreaterThan(settings.max_memory_usage!);
});
