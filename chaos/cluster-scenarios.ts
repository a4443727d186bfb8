import { setTimeout as sleep } from 'node:timers/promises';
import { pipelineRecovery, replicaKilledDuringMerges, RECOVERY_LIMIT_MS, SUPERVISOR_DELAY_MS, until, type ChaosContext, type Scenario, type ScenarioOutcome } from './scenarios.js';
import type { ClusterPart } from './stack.js';

/**
 * The faults of cluster mode (`make chaos TOPOLOGY=cluster`): a ClickHouse replica, a whole shard,
 * a Kafka broker, ZooKeeper and an ingest replica lost under the load. The services talk to the
 * first ClickHouse server; the faults hit the second shard (servers 3 and 4), which every
 * distributed read and insert needs, and a broker that leads some partitions.
 */

const SHARD_OUTAGE_MS = 20_000;
const BROKER_OUTAGE_MS = 15_000;
const ZOOKEEPER_OUTAGE_MS = 10_000;

/** A ClickHouse server of the cluster, by its number, answering SQL over HTTP. */
async function clickhouseAt(context: ChaosContext, server: number, query: string): Promise<Record<string, unknown>[]> {
  const url = new URL(context.stack.config.clickhouseUrl);
  url.port = String(Number(url.port) + server - 1);
  url.searchParams.set('database', context.stack.config.clickhouseDatabase);
  const response = await fetch(url, { method: 'POST', body: `${query} FORMAT JSON`, signal: AbortSignal.timeout(5000) });
  if (!response.ok) throw new Error(`clickhouse-${server}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { data: Record<string, unknown>[] }).data;
}

/** A replica has caught up once its events table is writable again and its replication queue is empty. */
async function replicaCaughtUp(context: ChaosContext, server: number): Promise<boolean> {
  const [row] = await clickhouseAt(context, server, "SELECT is_readonly, queue_size, absolute_delay FROM system.replicas WHERE table = 'sharded_events'").catch(() => []);
  return row !== undefined && Number(row.is_readonly) === 0 && Number(row.queue_size) === 0 && Number(row.absolute_delay) === 0;
}

/** Kills store processes, keeps them down for `downMs` (at least a supervisor's delay), starts them again, then waits for the pipeline. */
async function lose(context: ChaosContext, name: string, parts: ClusterPart[], downMs: number, during?: (until: number) => Promise<string[]>): Promise<ScenarioOutcome> {
  for (const part of parts) await context.stack.killPart(part);
  const back = Date.now() + Math.max(downMs, SUPERVISOR_DELAY_MS);
  const failures = during ? await during(back) : [];
  await sleep(Math.max(0, back - Date.now()));
  for (const part of parts) await context.stack.startPart(part);
  return pipelineRecovery(context, name, Date.now(), failures);
}

const replicaLost: Scenario = {
  name: 'kill -9 a ClickHouse replica (clickhouse-3), restarted by its supervisor',
  async run(context) {
    const outcome = await lose(context, this.name, ['clickhouse-3'], SUPERVISOR_DELAY_MS);
    if ((await until(() => replicaCaughtUp(context, 3), Date.now())) === null) outcome.failures.push(`clickhouse-3 did not catch up with its shard within ${RECOVERY_LIMIT_MS / 1000} s`);
    return outcome;
  },
};

/**
 * Reads while a whole shard is away: each must be a JSON 503 (never a 200, which could only be a
 * partial answer), sampled once a second until `end`.
 */
async function readsDuringShardOutage(context: ChaosContext, end: number): Promise<string[]> {
  const { frontUrl, projectId, personalApiKey } = context.api;
  const headers = { authorization: `Bearer ${personalApiKey}`, 'content-type': 'application/json' };
  const reads = [
    () => fetch(`${frontUrl}/api/projects/${projectId}/events/?limit=5`, { headers, signal: AbortSignal.timeout(10_000) }),
    () =>
      fetch(`${frontUrl}/api/environments/${projectId}/query/`, {
        method: 'POST',
        headers,
        // A text of its own each time, so no cached answer can stand in for the shards'.
        body: JSON.stringify({ query: { kind: 'HogQLQuery', query: `select count() from events where event != 'chaos ${Date.now()}'` } }),
        signal: AbortSignal.timeout(10_000),
      }),
  ];
  const failures: string[] = [];
  let refused = 0;
  // The first seconds go to the Distributed table noticing the servers are gone.
  await sleep(3000);
  while (Date.now() < end - 1000) {
    for (const read of reads) {
      const response = await read().catch(() => null);
      const body = (await response?.json().catch(() => null)) as { type?: string; detail?: string } | null;
      if (response?.status === 503 && typeof body?.detail === 'string') refused += 1;
      else failures.push(`a read while shard 2 was away answered ${response?.status ?? 'nothing'} ${JSON.stringify(body).slice(0, 120)}`);
    }
    await sleep(1000);
  }
  if (refused === 0) failures.push('no read answered a JSON 503 while shard 2 was away');
  return failures.slice(0, 5);
}

const shardLost: Scenario = {
  name: `a whole ClickHouse shard (clickhouse-3 and -4) down for ${SHARD_OUTAGE_MS / 1000} s`,
  run(context) {
    return lose(context, this.name, ['clickhouse-3', 'clickhouse-4'], SHARD_OUTAGE_MS, (end) => readsDuringShardOutage(context, end));
  },
};

const brokerLost: Scenario = {
  name: `kill -9 a Kafka broker (kafka-2), down for ${BROKER_OUTAGE_MS / 1000} s`,
  run(context) {
    return lose(context, this.name, ['kafka-2'], BROKER_OUTAGE_MS);
  },
};

const zookeeperLost: Scenario = {
  name: `kill -9 ZooKeeper, down for ${ZOOKEEPER_OUTAGE_MS / 1000} s`,
  async run(context) {
    const outcome = await lose(context, this.name, ['zookeeper'], ZOOKEEPER_OUTAGE_MS);
    for (const server of [1, 2, 3, 4]) {
      if ((await until(() => replicaCaughtUp(context, server), Date.now())) === null) outcome.failures.push(`clickhouse-${server}'s events table did not come back from read-only within ${RECOVERY_LIMIT_MS / 1000} s`);
    }
    return outcome;
  },
};

export const CLUSTER_SCENARIOS: Scenario[] = [replicaKilledDuringMerges, replicaLost, brokerLost, zookeeperLost, shardLost];
