/**
 * Ingest throughput, with its own baseline measured in the same run. 200,000 events for 10,000
 * distinct ids (10% $identify with $set, 2% $create_alias, 1% $groupidentify, the rest page
 * views and clicks) are sent to fresh topics as capture sends them, once the phase's consumers
 * have joined their consumer group and it has settled with every one of them (start-up, the same
 * for any throughput, is left out, and so is a rebalance handing half the partitions to a process
 * that joined late, which a running deployment does not go through); each phase times from the
 * first event sent until every event is queryable in ClickHouse:
 *   bare      the same events consumed and inserted with no person processing (the baseline),
 *   ingest    one ingest process (`services/ingest`),
 *   replicas2 two ingest processes in one consumer group.
 * Each phase also reports the CPU time per event of every store (ClickHouse, Postgres, Kafka,
 * Redis), read machine-wide by process name, so run it with nothing else using the stores. A
 * phase starts once ClickHouse's merges have finished, and its stores' time includes the merges
 * its own inserts caused, and ClickHouse's own count of what it inserted and merged. From those,
 * each round says how far two processes can get ahead of one on this machine (replicasCeiling).
 * Each phase first ingests 20,000 events of another project (see warmUp). Each phase writes to
 * fresh topics and a ClickHouse database of its own, deleted after the round with its projects.
 * Needs the stores of `make up` (the running services are not used).
 * BENCH_ROUNDS (default 3, as the other benches) repeats the three phases on fresh topics and
 * reports the medians: on a shared machine one round's figures move 15% either way, and the
 * replicas2 ratio, a quotient of two of them, more (0.93-1.36x over fourteen rounds of one session).
 * With TOPOLOGY=cluster (the stores of `make up TOPOLOGY=cluster`) the phases run on the cluster,
 * and a fourth runs one process as on a single node on the same machine (see `clustered`).
 * Run: npx tsx bench/ingest.ts [events] [--profile]   (--profile: CPU profile of the first one-process phase)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { CompressionTypes, type KafkaMessage } from 'kafkajs';
import { loadConfig } from '@tributary/config';
import { Sql, createClickHouse, formatDateTime, ident, migrateClickHouse, onCluster, sql, topologyOf, type ClickHouse } from '@tributary/clickhouse';
import { personlessPersonId } from '@tributary/ingestion';
import { createKafka, createProducer, decodeMessageEvents, encodeCaptureEvents, ensureTopics, messageKey, partitionOfKey, topicNames, type CaptureMessage, type RenewingProducer } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { PersonCache } from '@tributary/control-plane';
import { createRedis } from '@tributary/redis';
import { createPool, createTestTenant, freePort, uniqueName, waitFor } from '@tributary/test-support';
import { RowBuffer } from '../services/ingest/src/clickhouse-rows.js';
import { RowWriter } from '../services/ingest/src/clickhouse-writer.js';
import { IngestConsumer } from '../services/ingest/src/ingest-consumer.js';
import { groupBy } from '../services/ingest/src/group-by.js';
import { realisticEvent } from './events.js';
import { busyPercent, cpuSeconds, deleteBenchProjects, machineTicks, median, storeCpuPerEvent, storeCpuSeconds, table } from './lib.js';

const total = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200_000);
const profile = process.argv.includes('--profile');
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const distinctIds = 10_000;
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const logger = createLogger('bench-ingest', 'warn');
const pool = createPool(config, { max: 2 });
// For ClickHouse's own counters (system tables); each phase writes to a database of its own.
const clickhouse = createClickHouse(config);
const databases: string[] = [];
const redis = createRedis(config);
const personCache = new PersonCache(redis);
// The projects each phase creates, deleted with their persons after the round (see cleanUp).
const projects: number[] = [];

/**
 * What a round leaves in the stores goes with it: its ClickHouse databases, its projects (their
 * persons and distinct ids go by cascade), and those persons in decide's cache, kept there for 7
 * days (a session's runs had left Redis 1.9 million keys, 1.5 GB). Then Postgres reclaims the rows
 * its updates left dead: this machine kind runs it with autovacuum off, and the persons of earlier
 * runs (740,000 live and 810,000 dead rows after a dozen rounds) had taken its CPU per event from
 * 6-8 to 12-16 µs, so each round measured a slower Postgres than the one before.
 */
async function cleanUp(): Promise<void> {
  // On a cluster (TOPOLOGY=cluster) every server holds the database (the single-node phase's is
  // only on the first, and IF EXISTS passes over the others), and ZooKeeper its tables' replicas.
  for (const database of databases.splice(0)) await clickhouse.command(sql`DROP DATABASE IF EXISTS ${ident(database)}${Sql.trusted(onCluster(topologyOf(config)))}`);
  const ids = projects.splice(0);
  if (ids.length === 0) return;
  await deleteBenchProjects(pool, personCache, ids);
  await vacuumPersons();
}

const vacuumPersons = () => pool.query('VACUUM ANALYZE persons, person_distinct_ids');
// A run stopped half-way leaves nothing behind either.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(1)));
const kafka = createKafka(config, logger, 'bench-ingest');

function eventAt(i: number): Record<string, unknown> {
  const user = `bench-${i % distinctIds}`;
  const kind = i % 100;
  if (kind < 10) return { event: '$identify', distinct_id: user, properties: { $anon_distinct_id: `anon-${i % distinctIds}`, $set: { email: `${user}@example.test`, plan: i % 3 ? 'free' : 'pro' } } };
  if (kind < 12) return { event: '$create_alias', distinct_id: user, properties: { alias: `alias-${i % distinctIds}` } };
  if (kind < 13) return { event: '$groupidentify', distinct_id: user, properties: { $group_type: 'company', $group_key: `co-${i % 200}`, $group_set: { seats: i % 500 } } };
  const event = realisticEvent(i, distinctIds);
  return { ...event, distinct_id: user, properties: { ...event.properties, $groups: { company: `co-${i % 200}` } } };
}

interface Phase {
  prefix: string;
  token: string;
  teamId: number;
  /** A second project whose events warm the phase's processes up before the timing (see warmUp). */
  warmUp: { token: string; teamId: number };
  /** The phase's own ClickHouse database (see preparePhase), and a client of it. */
  database: string;
  clickhouse: ClickHouse;
  /** The phase's ClickHouse cluster, '' for plain tables on the first server alone (see singleNode). */
  cluster: string;
}

/**
 * With TOPOLOGY=cluster, a fourth phase runs one ingest process as on a single node, on the same
 * machine in the same round: plain tables on the first ClickHouse server and topics with one
 * replica (min.insync.replicas 1), so the round shows what replication costs.
 */
const clustered = config.clickhouseCluster !== '';

/**
 * A fresh project, fresh empty topics, and a ClickHouse database of the phase's own. With one
 * database for all, a phase's parts were merged with what earlier phases and earlier runs had left
 * in the same monthly partition: one phase's merges rewrote 250 MB, the next one's 1,240 MB for
 * the same inserts, and the stores' share of a phase depended on how often the bench had run before.
 */
async function preparePhase(singleNode = false): Promise<Phase> {
  const tenant = await createTestTenant(pool, config);
  const warmUpTenant = await createTestTenant(pool, config);
  projects.push(tenant.project.id, warmUpTenant.project.id);
  const token = tenant.project.api_token;
  const prefix = `${uniqueName('bench')}_`;
  const database = prefix.slice(0, -1);
  databases.push(database);
  const cluster = singleNode ? '' : config.clickhouseCluster;
  await migrateClickHouse({ ...config, clickhouseDatabase: database, clickhouseCluster: cluster });
  const admin = kafka.admin();
  await admin.connect();
  if (singleNode && clustered) {
    const topics = Object.values(topicNames(prefix));
    await admin.createTopics({
      waitForLeaders: false,
      topics: topics.map((topic) => ({ topic, numPartitions: config.kafkaPartitions, replicationFactor: 1, configEntries: [{ name: 'min.insync.replicas', value: '1' }] })),
    });
    await waitFor(() => admin.fetchTopicOffsets(topics[0]!).then(() => true, () => false), { what: 'the single-node topics' });
  } else {
    await ensureTopics(admin, prefix, config.kafkaPartitions);
  }
  await admin.disconnect();
  return { prefix, token, teamId: tenant.project.id, warmUp: { token: warmUpTenant.project.api_token, teamId: warmUpTenant.project.id }, database, clickhouse: createClickHouse({ ...config, clickhouseDatabase: database }), cluster };
}

type Batch = { partition: number; key: null; value: string }[];

/**
 * The phase's events as capture publishes them: requests of 100 events, each sending one message
 * per partition it reaches (the several-event form), gathered in sends of 5,000 events. Built
 * before the timing starts, so the bench's own CPU during a phase is only Kafka's client.
 */
function captureBatches(token: string, events = total): Batch[] {
  const now = new Date().toISOString();
  const batches: Batch[] = [];
  for (let offset = 0; offset < events; offset += 5_000) {
    const messages: Batch = [];
    for (let request = offset; request < Math.min(events, offset + 5_000); request += 100) {
      const requestMessages: CaptureMessage[] = [];
      for (let i = request; i < Math.min(events, request + 100); i++) {
        const event = eventAt(i);
        requestMessages.push({ uuid: randomUUID(), distinct_id: String(event.distinct_id), ip: '127.0.0.1', data: JSON.stringify(event), now, sent_at: null, token, historical_migration: false });
      }
      const byPartition = groupBy(requestMessages, (m) => partitionOfKey(messageKey(token, m.distinct_id), config.kafkaPartitions), (m) => m);
      for (const [partition, events] of byPartition) messages.push(...encodeCaptureEvents(events).map((value) => ({ partition, key: null, value })));
    }
    batches.push(messages);
  }
  return batches;
}

/**
 * Sends the batches in LZ4-compressed message sets, as capture does, one send at a time; events/s
 * from the first send until every event is queryable.
 */
async function sendTimed(producer: RenewingProducer, phase: Phase, batches: Batch[]): Promise<number> {
  const started = Date.now();
  await send(producer, phase, batches);
  return untilAllQueryable(phase, started);
}

interface Timed {
  rate: number;
  /** The bench process's own CPU per event over the timing: sending and polling, and for the baseline its pipeline too. */
  benchUsPerEvent: number;
  machineBusy: number;
  stores: Record<string, number>;
  work: Record<string, number>;
}

/**
 * Sends the phase's events timed (see `sendTimed`), with what the whole machine, the bench
 * itself, the stores and ClickHouse spent on them; the stores' and ClickHouse's figures take in
 * the merges the phase caused, which are waited for after the timing. `atEnd` reads whatever
 * else is due as the timing ends, before that wait.
 */
async function timedPhase<T>(producer: RenewingProducer, phase: Phase, batches: Batch[], atEnd: () => Promise<T>): Promise<Timed & { atEnd: T }> {
  const benchCpuBefore = process.cpuUsage();
  const storesBefore = await storeCpuSeconds();
  const workBefore = await clickhouseWork();
  const machineBefore = await machineTicks();
  const rate = await sendTimed(producer, phase, batches);
  const ended = await atEnd();
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const machineBusy = busyPercent(machineBefore, await machineTicks());
  await untilMergesSettle();
  return {
    rate,
    atEnd: ended,
    benchUsPerEvent: (benchCpu.user + benchCpu.system) / total,
    machineBusy,
    stores: storeCpuPerEvent(storesBefore, await storeCpuSeconds(), total),
    work: clickhouseWorkOf(workBefore, await clickhouseWork()),
  };
}

async function send(producer: RenewingProducer, phase: Phase, batches: Batch[]): Promise<void> {
  const topic = topicNames(phase.prefix).realtime;
  for (const messages of batches) await producer.send({ topic, acks: -1, compression: CompressionTypes.LZ4, messages });
}

const warmUpEvents = 20_000;

/**
 * A fresh process runs its hot path in V8's interpreter and baseline code at first, and opens its
 * store connections and fills its caches (projects, group types) on first use: start-up, which a
 * running deployment has behind it, and which weighs more the shorter the timed run. Events of
 * the phase's second project, sent and waited for before the timing, leave it out; the timed
 * project's persons are all still new.
 */
async function warmUp(producer: RenewingProducer, phase: Phase): Promise<void> {
  await send(producer, phase, captureBatches(phase.warmUp.token, warmUpEvents));
  await waitFor(async () => (await eventCount(phase, phase.warmUp.teamId)) >= warmUpEvents, { timeoutMs: 5 * 60_000, what: `the ${warmUpEvents} warm-up events` });
  await untilMergesSettle();
}

async function eventCount({ clickhouse }: Phase, teamId: number): Promise<number> {
  const [row] = await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE team_id = ${teamId}`);
  return Number(row?.n ?? 0);
}

/**
 * Events queryable once each: a rebalance hands a partition over with chunks its old owner
 * processed but had not committed, and the new owner writes them again (ReplacingMergeTree
 * folds the copies later), so rows alone can overcount.
 */
async function distinctEventCount({ clickhouse, teamId }: Phase): Promise<number> {
  const [row] = await clickhouse.query<{ n: string }>(sql`SELECT uniqExact(uuid) AS n FROM events WHERE team_id = ${teamId}`);
  return Number(row?.n ?? 0);
}

const CLICKHOUSE_WORK = ['InsertQuery', 'InsertedBytes', 'MergedUncompressedBytes', 'MergesTimeMilliseconds'] as const;
type ClickHouseWork = Record<(typeof CLICKHOUSE_WORK)[number], number>;

/** ClickHouse's own counters of inserts and merges since it started. */
async function clickhouseWork(): Promise<ClickHouseWork> {
  const rows = await clickhouse.query<{ event: string; value: string }>(sql`SELECT event, value FROM system.events`);
  return Object.fromEntries(CLICKHOUSE_WORK.map((name) => [name, Number(rows.find((r) => r.event === name)?.value ?? 0)])) as ClickHouseWork;
}

/**
 * What a phase asked of ClickHouse: its inserts, the bytes they carried, and the bytes its
 * background merges rewrote (with the time they took), most of ClickHouse's CPU for wide rows.
 */
function clickhouseWorkOf(before: ClickHouseWork, after: ClickHouseWork): Record<string, number> {
  const delta = (name: keyof ClickHouseWork) => after[name] - before[name];
  return {
    'CH inserts': delta('InsertQuery'),
    'CH MB inserted': Math.round(delta('InsertedBytes') / 1e6),
    'CH MB merged': Math.round(delta('MergedUncompressedBytes') / 1e6),
    'CH merge s': delta('MergesTimeMilliseconds') / 1000,
  };
}

/**
 * Waits for ClickHouse's background merges to finish, so a phase neither starts beside the
 * previous phase's merges nor leaves its own out of its stores' CPU time.
 */
async function untilMergesSettle(): Promise<void> {
  const settled = async () => Number((await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.merges`))[0]?.n ?? 0) === 0;
  // Merges that outlast the wait only add to the measured stores' CPU, so the phase goes on.
  await waitFor(settled, { timeoutMs: 180_000, intervalMs: 500, what: 'ClickHouse merges to finish' }).catch(() => undefined);
}

/** Events/s since `started`, once every event is queryable. */
async function untilAllQueryable(phase: Phase, started: number): Promise<number> {
  // The cheap count first; the exact one only when it says all might be in.
  const allIn = async () => (await eventCount(phase, phase.teamId)) >= total && (await distinctEventCount(phase)) >= total;
  await waitFor(allIn, { timeoutMs: 15 * 60_000 - (Date.now() - started), intervalMs: 250, what: `all ${total} events` });
  return total / ((Date.now() - started) / 1000);
}

/**
 * Until the consumer group is stable with `members` members. Kafka hands all partitions to the
 * first process that joins and takes half of them back when the second arrives; until then one
 * process works alone, and in a run of seconds that start-up, not two processes sharing the
 * partitions, would set the figure.
 */
async function untilGroupStable(groupId: string, members: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const stable = async () => {
      const { groups } = await admin.describeGroups([groupId]);
      return groups[0]?.state === 'Stable' && groups[0].members.length === members;
    };
    await waitFor(stable, { timeoutMs: 120_000, intervalMs: 50, what: `consumer group ${groupId} to settle with ${members} members` });
  } finally {
    await admin.disconnect();
  }
}

/**
 * The baseline: the same consumer and row writer, with a processor that does no person work. Its
 * writer inserts as soon as the previous insert is done (no INGEST_INSERT_INTERVAL_MS), which
 * would otherwise cap the baseline's rate rather than measure the machine's. It runs in the bench's
 * own process, so its CPU per event includes sending the events.
 */
async function bare(phase: Phase, producer: RenewingProducer): Promise<Timed & { cpuUsPerEvent: number }> {
  const rowWriter = new RowWriter(phase.clickhouse, { maxRowsPerInsert: config.ingestInsertMaxRows });
  const consumer = new IngestConsumer({
    kafka,
    topics: topicNames(phase.prefix),
    groupId: `${phase.prefix}bare`,
    writeRows: (rows) => rowWriter.write(rows),
    processingConcurrency: config.ingestPartitionsConcurrently,
    maxQueuedEvents: config.ingestMaxQueuedEvents,
    producer,
    logger,
    processor: {
      async processBatch(messages: readonly KafkaMessage[], rows: RowBuffer) {
        for (const { decoded } of messages.flatMap(decodeMessageEvents)) {
          if (!decoded.ok) continue;
          const event = JSON.parse(decoded.message.data) as { event: string; distinct_id: string; properties?: Record<string, unknown> };
          const now = formatDateTime(new Date(decoded.message.now));
          const teamId = decoded.message.token === phase.token ? phase.teamId : phase.warmUp.teamId;
          rows.events.add({
            uuid: decoded.message.uuid, event: event.event, properties: JSON.stringify(event.properties ?? {}), timestamp: now, timestamp_ms: 0,
            team_id: teamId, distinct_id: event.distinct_id, elements_chain: '', created_at: now, person_id: personlessPersonId(teamId, event.distinct_id),
            person_properties: '{}', person_created_at: now, group_0: '', group_1: '', group_2: '', group_3: '', group_4: '',
          });
        }
      },
    },
  });
  await consumer.start();
  await untilGroupStable(`${phase.prefix}bare`, 1);
  await warmUp(producer, phase);
  const batches = captureBatches(phase.token);
  const timed = await timedPhase(producer, phase, batches, async () => undefined);
  await consumer.stop();
  return { ...timed, cpuUsPerEvent: timed.benchUsPerEvent };
}

const profileDir = '.tributary/profiles/ingest';

/** Real ingest processes on the phase's topics; returns events/s, their CPU time per event and the highest RSS any of them reached. */
async function ingest(phase: Phase, producer: RenewingProducer, replicas: number, cpuProfile: boolean): Promise<Timed & { rssMb: number; cpuUsPerEvent: number }> {
  const ports = await Promise.all(Array.from({ length: replicas }, () => freePort()));
  const children: ChildProcess[] = [];
  for (let r = 0; r < replicas; r++) {
    const args = [...nodeFlags, ...(cpuProfile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), '--conditions=tributary-compiled', 'services/ingest/dist/main.js'];
    children.push(
      spawn(process.execPath, args, {
        env: { ...process.env, KAFKA_TOPIC_PREFIX: phase.prefix, CLICKHOUSE_DATABASE: phase.database, CLICKHOUSE_CLUSTER: phase.cluster, INGEST_CONSUMER_GROUP: `${phase.prefix}ingest`, INGEST_PORT: String(ports[r]), LOG_LEVEL: 'warn' },
        stdio: ['ignore', openSync(`.tributary/logs/bench-ingest-${replicas}-${r + 1}.log`, 'w'), 'inherit'],
      }),
    );
  }
  // Whatever fails once they run, the processes are stopped, or they would keep the bench alive.
  let sample: NodeJS.Timeout | undefined;
  try {
    // Events are sent once every process has started its consumer (it serves health checks after)
    // and the group has settled with all of them.
    for (let r = 0; r < replicas; r++) {
      const healthy = async () => (await fetch(`http://127.0.0.1:${ports[r]}/_health`).catch(() => null))?.ok === true;
      while (!(await healthy())) {
        // A process that could not start (a bad NODE_OPTIONS, say) would otherwise be waited for forever.
        const { exitCode, signalCode } = children[r]!;
        if (exitCode !== null || signalCode !== null) throw new Error(`ingest process ${r + 1} exited (${exitCode ?? signalCode}) before it served its health check`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await untilGroupStable(`${phase.prefix}ingest`, replicas);
    await warmUp(producer, phase);
    const batches = captureBatches(phase.token);
    let rssMb = 0;
    sample = setInterval(async () => {
      for (const child of children) {
        const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
        const match = /VmRSS:\s+(\d+) kB/.exec(status);
        if (match) rssMb = Math.max(rssMb, Number(match[1]) / 1024);
      }
    }, 250);
    const cpuOf = async () => (await Promise.all(children.map((child) => cpuSeconds(child.pid!)))).reduce((a, b) => a + b, 0);
    const cpuBefore = await cpuOf();
    const timed = await timedPhase(producer, phase, batches, async () => ((await cpuOf()) - cpuBefore) * 1e6 / total);
    return { ...timed, rssMb, cpuUsPerEvent: timed.atEnd };
  } finally {
    clearInterval(sample);
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)))));
  }
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
}

/**
 * Self time per function of the phase's busiest CPU profile, as a share of its busy time. The
 * profile covers the process's whole life, start-up and the wait for the group before the phase
 * and the wait for ClickHouse's merges after it, so its idle samples say little about the phase:
 * they are left out.
 */
async function profileSummary(): Promise<{ function: string; 'busy %': number }[]> {
  const profiles: CpuProfile[] = [];
  for (const file of (await readdir(profileDir)).filter((f) => f.endsWith('.cpuprofile'))) profiles.push(JSON.parse(await readFile(`${profileDir}/${file}`, 'utf8')) as CpuProfile);
  const label = (prof: CpuProfile) =>
    new Map(prof.nodes.map((n) => [n.id, `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/work\/[^/]+\//, '')}:${n.callFrame.lineNumber + 1}`]));
  const busy = (prof: CpuProfile) => {
    const names = label(prof);
    return prof.samples.filter((id) => !names.get(id)!.startsWith('(idle)')).length;
  };
  const prof = profiles.sort((a, b) => busy(b) - busy(a))[0]!;
  const names = label(prof);
  const counts = new Map<string, number>();
  let busySamples = 0;
  for (const id of prof.samples) {
    const name = names.get(id)!;
    if (name.startsWith('(idle)')) continue;
    counts.set(name, (counts.get(name) ?? 0) + 1);
    busySamples += 1;
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([fn, n]) => ({ function: fn.slice(0, 110), 'busy %': (100 * n) / busySamples }));
}

/**
 * What two processes can reach against one when the stores share the machine's cores: with i the
 * processes' CPU per event, s the stores' and b the bench's own (sending the events and polling
 * for them), the cores do at most cores/(i + s + b) events a second, whatever the number of
 * processes. One process does not use a core and no more: its main thread waits on the stores part
 * of the time, and V8's collector and compiler threads (about a third of its CPU) run beside it.
 * So a cheaper ingest raises both figures, and only cheaper stores (or stores and load on other
 * machines) raise the ceiling alone. The machine's measured busy share checks it.
 */
function replicasCeiling(oneRate: number, ingestUsPerEvent: number, stores: Record<string, number>, benchUsPerEvent: number): string {
  const storesUsPerEvent = Object.values(stores).reduce((a, b) => a + b, 0);
  const cores = availableParallelism();
  const ceiling = (cores * 1e6) / (ingestUsPerEvent + storesUsPerEvent + benchUsPerEvent) / oneRate;
  return `two processes can reach at most ${ceiling.toFixed(2)}x one here: ${cores} cores, ingest ${ingestUsPerEvent.toFixed(1)}, stores ${storesUsPerEvent} and the bench ${benchUsPerEvent.toFixed(1)} µs/event with two processes, one process ${Math.round(oneRate)} events/s`;
}

// Ingest runs as infra/services.sh runs it: compiled, with the same flags for node.
execFileSync('npx', ['tsx', 'infra/compile.ts'], { stdio: 'ignore' });
const nodeFlags = execFileSync('sh', ['infra/node-flags.sh', 'ingest'], { encoding: 'utf8' }).split(/\s+/).filter(Boolean);
const runs = [];
const singleNodeRuns: number[] = [];
try {
  // Dead rows left by whatever ran before (tests, say) are reclaimed before the first round too.
  await vacuumPersons();
  for (let round = 1; round <= rounds; round++) {
    console.log(`${rounds > 1 ? `round ${round} of ${rounds}: ` : ''}${total} events for each of three phases...`);
    // A producer per round: one that sent to a round's topics fails its next metadata refresh once
    // they are deleted below.
    const producer = createProducer(kafka);
    await producer.connect();
    const phases = [await preparePhase(), await preparePhase(), await preparePhase(), ...(clustered ? [await preparePhase(true)] : [])];
    await untilMergesSettle();
    console.log('bare pipeline...');
    const bareRun = await bare(phases[0]!, producer);
    const profiled = profile && round === 1;
    if (profiled) {
      await rm(profileDir, { recursive: true, force: true });
      await mkdir(profileDir, { recursive: true });
    }
    console.log('one ingest process...');
    const one = await ingest(phases[1]!, producer, 1, profiled);
    console.log('two ingest processes...');
    const two = await ingest(phases[2]!, producer, 2, false);
    if (clustered) {
      console.log('one ingest process, single node...');
      const single = await ingest(phases[3]!, producer, 1, false);
      singleNodeRuns.push(single.rate);
      table([{ phase: 'ingest, 1 process, single node', 'events/s': single.rate, 'CPU µs/event': single.cpuUsPerEvent, 'machine busy %': single.machineBusy, 'peak RSS MB': single.rssMb, ...single.stores, ...single.work }]);
    }
    table([
      { phase: 'bare pipeline (no persons)', 'events/s': bareRun.rate, 'CPU µs/event': bareRun.cpuUsPerEvent, 'machine busy %': bareRun.machineBusy, 'peak RSS MB': Number.NaN, ...bareRun.stores, ...bareRun.work },
      { phase: 'ingest, 1 process', 'events/s': one.rate, 'CPU µs/event': one.cpuUsPerEvent, 'machine busy %': one.machineBusy, 'peak RSS MB': one.rssMb, ...one.stores, ...one.work },
      { phase: 'ingest, 2 processes', 'events/s': two.rate, 'CPU µs/event': two.cpuUsPerEvent, 'machine busy %': two.machineBusy, 'peak RSS MB': two.rssMb, ...two.stores, ...two.work },
    ]);
    if (profiled) table(await profileSummary());
    console.log(replicasCeiling(one.rate, two.cpuUsPerEvent, two.stores, two.benchUsPerEvent));
    // Measured rather than derived: what one process leaves of the machine is all a second can add.
    console.log(`one process kept the machine ${one.machineBusy}% busy and two ${two.machineBusy}%: on this machine two can reach at most ${(100 / Math.max(1, one.machineBusy)).toFixed(2)}x one`);
    runs.push({ bare: bareRun.rate, one: one.rate, two: two.rate, rss: Math.max(one.rssMb, two.rssMb) });
    await producer.disconnect();
    // The round's 600,000 events were only there to be timed: their topics and databases would only fill the disk.
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: phases.flatMap((phase) => Object.values(topicNames(phase.prefix))) });
    await admin.disconnect();
    for (const phase of phases) await phase.clickhouse.close();
    await cleanUp();
  }
} finally {
  await cleanUp();
}
await clickhouse.close();
await pool.end();
redis.disconnect();
if (clustered) console.log(`single node in the same run: ingest_events_per_s=${Math.round(median(singleNodeRuns))}`);
// Medians of the rounds (the ratio the median of each round's own), the highest RSS of any.
console.log(
  `RESULT ingest_events_per_s=${Math.round(median(runs.map((r) => r.one)))} bare_events_per_s=${Math.round(median(runs.map((r) => r.bare)))}` +
    ` ratio=${median(runs.map((r) => r.one / r.bare)).toFixed(2)} replicas2_events_per_s=${Math.round(median(runs.map((r) => r.two)))}` +
    ` rss_mb=${Math.round(Math.max(...runs.map((r) => r.rss)))}`,
);
process.exit(0);
