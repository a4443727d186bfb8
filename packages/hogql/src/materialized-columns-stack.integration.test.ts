import { randomBytes, randomInt } from 'node:crypto';
import { createClickHouse, serverOf, topologyOf, type ClickHouse } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import { loadHogQLParser } from './index.js';
import { describeMaterializedKey } from '../test/materialized-suite.js';

/**
 * A property materialized in the stack's own events table gives the same answers, on a single
 * node and on every shard of a cluster (whose shards resolve joins in the stack's database, which
 * `materialized-columns.integration.test.ts` cannot use for its whole corpus).
 */
const config = testConfig();
let clickhouse: ClickHouse;

describeMaterializedKey(
  async () => {
    await loadHogQLParser();
    clickhouse = createClickHouse(config, { requestTimeoutMs: 240_000 });
    return { clickhouse, server: await serverOf(clickhouse), topology: topologyOf(config) };
  },
  `mat_test_${randomBytes(4).toString('hex')}`,
  700_000_000 + randomInt(100_000_000),
);

afterAll(async () => {
  await clickhouse.close();
});
