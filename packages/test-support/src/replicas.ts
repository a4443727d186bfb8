import { ident, sql, type ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { waitFor } from './wait-for.js';

/**
 * On a cluster, waits until the replica of each shard that answers queries holds what a test
 * wrote straight into these replicated tables for these projects. Writes go to one server and
 * reach the others a moment later; a query that joins them on every shard would otherwise meet
 * a shard that has not heard of them yet. Nothing to wait for on one server.
 */
export async function replicasHold(clickhouse: ClickHouse, config: Config, teamIds: readonly number[], tables: readonly string[] = ['person', 'person_distinct_id']): Promise<void> {
  if (!config.clickhouseCluster) return;
  const [cluster] = await clickhouse.query<{ shards: string }>(sql`SELECT uniqExact(shard_num) AS shards FROM system.clusters WHERE cluster = ${config.clickhouseCluster}`);
  const shards = Number(cluster?.shards ?? 1);
  const teams = [...teamIds];
  for (const table of tables) {
    const everywhere = sql`cluster(${config.clickhouseCluster}, ${ident(config.clickhouseDatabase)}.${ident(table)})`;
    await waitFor(
      async () => {
        const [counts] = await clickhouse.query<{ here: string; all: string }>(
          sql`SELECT (SELECT count() FROM ${ident(table)} WHERE has(${teams}, team_id)) AS here, (SELECT count() FROM ${everywhere} WHERE has(${teams}, team_id)) AS all`,
        );
        return Number(counts?.all) === shards * Number(counts?.here);
      },
      { what: `every shard to hold the test's ${table} rows` },
    );
  }
}
