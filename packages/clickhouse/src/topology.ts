import type { Config } from '@tributary/config';
import { ident } from './sql.js';

/**
 * Where Tributary's tables live: one server, or the shards and replicas of a ClickHouse cluster
 * (CLICKHOUSE_CLUSTER). Migrations are written once, for one server; `renderStatement` turns each
 * into its cluster form, so the services' SQL names the same tables in both topologies.
 */
export interface Topology {
  /** The cluster's name in remote_servers, or null for a single server. */
  cluster: string | null;
  database: string;
}

export type TopologyConfig = Pick<Config, 'clickhouseCluster' | 'clickhouseDatabase'>;

export function topologyOf(config: TopologyConfig): Topology {
  return { cluster: config.clickhouseCluster === '' ? null : config.clickhouseCluster, database: config.clickhouseDatabase };
}

/**
 * Tables split over the shards, by the expression that picks a row's shard. Events go by distinct
 * id, as PostHog shards them: every copy of one event (a replayed Kafka message, a retried insert)
 * has the same distinct id, so it lands on the same shard, where ReplacingMergeTree folds it; and
 * a person's events sit together. Every other table is small and replicated on every server, so
 * a shard joins events with persons locally.
 */
const SHARDING_KEYS: Readonly<Record<string, string>> = { events: 'sipHash64(distinct_id)' };

/** The table a sharded table's rows are stored in on each shard; the table's own name is the Distributed one. */
export function shardTableName(table: string): string {
  return `sharded_${table}`;
}

/** The table that holds a table's rows, where mutations (ALTER ... DELETE) must go. */
export function dataTableName(topology: Topology, table: string): string {
  return topology.cluster !== null && table in SHARDING_KEYS ? shardTableName(table) : table;
}

/** ` ON CLUSTER name` in a cluster, nothing on one server. */
export function onCluster(topology: Topology): string {
  return topology.cluster === null ? '' : ` ON CLUSTER ${topology.cluster}`;
}

/**
 * The cluster, next to the topology's own in remote_servers, that lists one replica of each shard:
 * where an ALTER of a sharded table runs. An ALTER of a replicated table is made once per shard and
 * replication carries it to the other replicas; sent to every replica, 18.16's DDL worker lets
 * them race for the shard's turn, and the loser finds the turn taken, stops its DDL worker for
 * good, and every later ON CLUSTER statement then hangs on that server.
 */
export function oneReplicaPerShardCluster(cluster: string): string {
  return `${cluster}_one_replica_per_shard`;
}

/**
 * The table an ALTER (a column change or a mutation) names, with what places it: every shard's
 * data table through one replica of each shard; a table replicated on every server only where the
 * client is connected, since its replicas share one ZooKeeper path and replication does the rest.
 */
export function alteredTable(topology: Topology, table: string): string {
  const name = `${ident(topology.database).text}.${ident(dataTableName(topology, table)).text}`;
  if (topology.cluster === null || !(table in SHARDING_KEYS)) return name;
  return `${name} ON CLUSTER ${oneReplicaPerShardCluster(topology.cluster)}`;
}

const CREATE_TABLE = /^CREATE TABLE IF NOT EXISTS (\w+) ([\s\S]*)$/;
const ENGINE = /ENGINE = (ReplacingMergeTree|MergeTree)\(([^)]*)\)/;
const ALTER_TABLE = /^ALTER TABLE (\w+) ([\s\S]*)$/;

/**
 * A migration statement in the topology's form. On one server it is unchanged. In a cluster it runs
 * ON CLUSTER with the Replicated form of its engine; a sharded table is created as its shard table
 * (replicated within each shard) with a Distributed table of the original name in front, and an
 * ALTER of it changes the shard table, then makes the Distributed table again. Replicas of a table share a ZooKeeper path: per shard for sharded
 * tables, one for the whole cluster for the others.
 */
export function renderStatement(statement: string, topology: Topology): string[] {
  const { cluster, database } = topology;
  if (cluster === null) return [statement];
  const create = CREATE_TABLE.exec(statement);
  if (create) {
    const [, table, rest] = create as unknown as [string, string, string];
    const engine = ENGINE.exec(rest);
    if (!engine) throw new Error(`cannot render for a cluster: ${table} has no MergeTree engine`);
    const [, kind, args] = engine as unknown as [string, string, string];
    const sharded = table in SHARDING_KEYS;
    const stored = sharded ? shardTableName(table) : table;
    const path = `/clickhouse/tables/${sharded ? '{shard}' : 'all'}/${database}.${table}`;
    const replicated = `ENGINE = Replicated${kind}('${path}', '{replica}'${args.trim() === '' ? '' : `, ${args}`})`;
    const statements = [`CREATE TABLE IF NOT EXISTS ${database}.${stored}${onCluster(topology)} ${rest.replace(ENGINE, replicated)}`];
    return sharded ? [...statements, distributedTable(topology, table)] : statements;
  }
  const alter = ALTER_TABLE.exec(statement);
  if (alter) {
    const [, table, rest] = alter as unknown as [string, string, string];
    const altered = `ALTER TABLE ${alteredTable(topology, table)} ${rest}`;
    // 18.16 runs ALTER ON CLUSTER only on replicated tables; the Distributed table holds no rows
    // (inserts through it are synchronous), so it is made again with the shard table's new columns.
    return table in SHARDING_KEYS ? [altered, `DROP TABLE IF EXISTS ${database}.${table}${onCluster(topology)}`, distributedTable(topology, table)] : [altered];
  }
  throw new Error(`cannot render for a cluster: ${statement.slice(0, 60)}`);
}

function distributedTable(topology: Topology, table: string): string {
  const { cluster, database } = topology;
  const stored = shardTableName(table);
  return `CREATE TABLE IF NOT EXISTS ${database}.${table}${onCluster(topology)} AS ${database}.${stored} ENGINE = Distributed(${cluster}, ${database}, ${stored}, ${SHARDING_KEYS[table]})`;
}
