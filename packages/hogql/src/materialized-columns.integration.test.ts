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
