import { testConfig, uniqueName, waitFor } from '@tributary/test-support';
import { createClickHouse, type ClickHouse } from './client.js';
import { migrateClickHouse, runStatement } from './migrations.js';
import { sql, Sql } from './sql.js';
import { onCluster, oneReplicaPerShardCluster, topologyOf } from './topology.js';

/**
 * On a cluster, an ALTER of a sharded table is queued for one replica of each shard, and an ALTER
 * of a table replicated on every server is not queued at all: sent to every replica, 18.16's DDL
 * worker lets two replicas of a shard race for it, and the loser's worker stops for good (every
 * later ON CLUSTER statement on that server then hangs). Either way each replica ends up with the
 * change.
 */
const config = testConfig({ clickhouseDatabase: uniqueName('tributary_alters') });
const topology = topologyOf(config);
const cluster = topology.cluster;
let clickhouse: ClickHouse;

if (cluster === null) {
  it.skip('queues ALTERs for one replica of each shard: a cluster only', () => undefined);
} else {
  beforeAll(async () => {
    await migrateClickHouse(config);
    clickhouse = createClickHouse(config, { requestTimeoutMs: 120_000 });
  });

  afterAll(async () => {
    await clickhouse.command(Sql.trusted(`DROP DATABASE IF EXISTS ${config.clickhouseDatabase}${onCluster(topology)}`));
    await clickhouse.close();
  });

  /** The hosts of every DDL task whose statement names this test's database and `text` (the queue escapes their dots). */
  async function queuedHosts(text: string): Promise<string[][]> {
    const tasks = await clickhouse.query<{ value: string }>(sql`SELECT value FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl'`);
    return tasks
      .map((task) => task.value)
      .filter((value) => value.includes(config.clickhouseDatabase) && value.includes(text))
      .map((value) => [.../^hosts: \[(.*)\]$/m.exec(value)![1]!.matchAll(/'([^']+)'/g)].map(([, host]) => decodeURIComponent(host!)));
  }

  /** Waits until every replica of the cluster holds `column` in `table` of this test's database. */
  async function everyReplicaHas(table: string, column: string): Promise<void> {
    const [all] = await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.clusters WHERE cluster = ${cluster}`);
    await waitFor(async () => (await replicasWith(table, column)).length === Number(all?.n), { what: `every replica's ${table} to have ${column}` });
  }

  /** Which replicas of the cluster hold `column` in `table` of this test's database, by address. */
  async function replicasWith(table: string, column: string): Promise<string[]> {
    const replicas = await clickhouse.query<{ address: string }>(
      sql`SELECT concat(host_address, ':', toString(port)) AS address FROM system.clusters WHERE cluster = ${cluster} ORDER BY address`,
    );
    const holding: string[] = [];
    for (const { address } of replicas) {
      const everywhere = sql`remote(${address}, system.columns, ${config.clickhouseUser}, ${config.clickhousePassword})`;
      const [row] = await clickhouse.query<{ n: string }>(
        sql`SELECT count() AS n FROM ${everywhere} WHERE database = ${config.clickhouseDatabase} AND table = ${table} AND name = ${column}`,
      );
      if (Number(row?.n) === 1) holding.push(address);
    }
    return holding;
  }

  it('queues an ALTER of events for one replica of each shard, and every replica gets it', async () => {
    const [shards] = await clickhouse.query<{ n: string }>(sql`SELECT uniqExact(shard_num) AS n FROM system.clusters WHERE cluster = ${cluster}`);
    await runStatement(clickhouse, "ALTER TABLE events ADD COLUMN alters_probe String DEFAULT ''", topology);

    const [hosts, ...others] = await queuedHosts('alters_probe');
    expect(others).toEqual([]);
    expect(hosts).toHaveLength(Number(shards?.n));
    const [leaders] = await clickhouse.query<{ n: string }>(
      sql`SELECT count() AS n FROM system.clusters WHERE cluster = ${oneReplicaPerShardCluster(cluster)} AND has(${hosts!}, concat(host_address, ':', toString(port)))`,
    );
    expect(Number(leaders?.n)).toBe(Number(shards?.n));
    await everyReplicaHas('sharded_events', 'alters_probe');
    // The Distributed table in front, made again on every server, shows the column too.
    await everyReplicaHas('events', 'alters_probe');
  });

  it('alters a table replicated on every server without queueing it, and every replica gets it', async () => {
    await runStatement(clickhouse, "ALTER TABLE person ADD COLUMN alters_person_probe String DEFAULT ''", topology);
    expect(await queuedHosts('alters_person_probe')).toEqual([]);
    await everyReplicaHas('person', 'alters_person_probe');
  });
}
