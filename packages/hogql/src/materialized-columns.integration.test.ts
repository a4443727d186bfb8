import { createClickHouse, migrateClickHouse, onCluster, serverOf, Sql, topologyOf, type ClickHouse } from '@tributary/clickhouse';
import { testConfig, uniqueName } from '@tributary/test-support';
import { loadHogQLParser } from './index.js';
import { describeMaterializedAnswers } from '../test/materialized-suite.js';

/**
 * Materialized properties on 18.16 (and, with CLICKHOUSE_CLUSTER, on every shard): in a database
 * of its own, since adding columns to the stack's shared events table would change it under
 * every other test.
 */
const config = testConfig({ clickhouseDatabase: uniqueName('tributary_mat') });
const topology = topologyOf(config);
let clickhouse: ClickHouse;

// A cluster's shards run a query's person joins and IN subqueries in the database remote_servers
// names for them (the stack's), not this test's own, so on a cluster the corpus runs on a single node only.
if (process.env.TOPOLOGY === 'cluster') {
  it.skip('the materialized answers suite needs a single node for its own database', () => undefined);
} else {
  describeMaterializedAnswers(async () => {
    await loadHogQLParser();
    await migrateClickHouse(config);
    clickhouse = createClickHouse(config, { requestTimeoutMs: 120_000 });
    return { clickhouse, server: await serverOf(clickhouse), topology };
  });

  afterAll(async () => {
    await clickhouse.command(Sql.trusted(`DROP DATABASE IF EXISTS ${config.clickhouseDatabase}${onCluster(topology)}`));
    await clickhouse.close();
  });
}
