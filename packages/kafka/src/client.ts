import kafkajs, { Kafka, logLevel, type Admin, type Producer, type LogEntry } from 'kafkajs';
import type { Config } from '@tributary/config';
import type { Logger } from '@tributary/logger';
import { TOPIC_KINDS, topicNames } from './topics.js';
import { keyHashPartitioner } from './partitioner.js';
import { registerLz4 } from './lz4-codec.js';
import { acknowledgingEveryPartition, RenewingProducer } from './renewing-producer.js';

registerLz4();

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * Producers stop retrying after `retry.retries` on purpose (see `createProducer`); kafkajs warns
 * about that on every start, which would teach operators to ignore its warnings.
 */
const DELIBERATE = 'Limiting retries for the idempotent producer may invalidate EoS guarantees';

/** kafkajs logs through the service's pino logger instead of its own console output. */
function pinoLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, ...extra } = log;
      if (message === DELIBERATE) return;
      logger[levels[level] ?? 'info']({ kafka: extra }, message);
    };
}

export function createKafka(config: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'>, logger: Logger, clientSuffix: string): Kafka {
  return new Kafka({
    clientId: `${config.kafkaClientId}-${clientSuffix}`,
    brokers: config.kafkaBrokers,
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(logger.child({ component: 'kafka' })),
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 5_000 },
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
  });
}

/**
 * A producer for acknowledged writes: idempotent (so retries never duplicate a message) and
 * waiting for every in-sync replica. `instrument` is applied to each kafkajs producer made, the
 * first and those that replace one after a failed send (see `RenewingProducer`).
 *
 * The partitioner is named rather than left to kafkajs's default: ingest relies on a key always
 * landing on the same partition, so a change of default must never change it silently. This is
 * the Java client's murmur2 partitioner, the one kafkajs 2 has used since it started; capture
 * makes the same choice itself (`partitionOfKey`) for the events it sends several to a message.
 *
 * Retries are bounded (the client's 5) rather than endless as kafkajs suggests for idempotent
 * producers: a send to a broker that is away must fail, so capture answers 503 and the queue of
 * waiting requests stays bounded. Giving up may leave a batch written but unacknowledged; the
 * client's retry then writes it again, and uuid-keyed event rows absorb the duplicate. What
 * giving up must not do is leave the producer's batch numbering behind the broker's, which is
 * why the next send goes through a new producer. Nor may a send be acknowledged with messages
 * left out (see `acknowledgingEveryPartition`).
 */
export function createProducer(kafka: Kafka, instrument: (producer: Producer) => Producer = (producer) => producer): RenewingProducer {
  return new RenewingProducer(() =>
    instrument(
      acknowledgingEveryPartition(
        kafka.producer({
          idempotent: true,
          maxInFlightRequests: 5,
          allowAutoTopicCreation: false,
          createPartitioner: keyHashPartitioner,
        }),
      ),
    ),
  );
}

/** Errors a broker answers with while a new topic, or a change to one, has not reached it yet. */
const SETTLING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION']);

function isSettling(error: unknown): boolean {
  if (SETTLING.has((error as { type?: string }).type ?? '')) return true;
  // kafkajs's fetchTopicOffsets fails this way when the broker asked has no partitions for the topic yet.
  return error instanceof TypeError;
}

/**
 * Waits until these topics serve reads and writes from every broker's point of view: each shows
 * at least `minPartitions` partitions, each partition has a leader, and each leader answers for
 * it. A broker learns of a topic, or of its new partitions, after the controller made them, each
 * at its own pace, and kafkajs asks a random broker for metadata; so the check must pass as many
 * times in a row as there are brokers. kafkajs's own wait (`waitForLeaders`) retries only
 * "leader not available" and trusts the first broker asked.
 */
async function waitUntilServed(admin: Admin, topics: string[], minPartitions = 1, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const { brokers } = await admin.describeCluster();
  let inARow = 0;
  let settling: unknown;
  for (;;) {
    try {
      const metadata = await admin.fetchTopicMetadata({ topics });
      const led = metadata.topics.every((t) => t.partitions.length >= minPartitions && t.partitions.every((p) => p.leader >= 0));
      if (led) {
        for (const topic of topics) await admin.fetchTopicOffsets(topic);
        inARow += 1;
        if (inARow >= brokers.length) return;
        continue;
      }
    } catch (error) {
      if (!isSettling(error)) throw error;
      settling = error;
    }
    inARow = 0;
    if (Date.now() > deadline) throw new Error(`topics ${topics.join(', ')} were not served after ${timeoutMs} ms`, { cause: settling });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Raises the partition count of topics that have fewer. A broker whose metadata is behind may
 * show fewer partitions than there are; Kafka then refuses the count as invalid (not more than
 * now), so the counts are read again until every broker agrees. Whether it added any.
 */
async function growPartitions(admin: Admin, topics: string[], partitions: number, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const metadata = await admin.fetchTopicMetadata({ topics });
    const short = metadata.topics.filter((t) => t.partitions.length < partitions);
    if (short.length === 0) return false;
    try {
      await admin.createPartitions({ validateOnly: false, topicPartitions: short.map((t) => ({ topic: t.name, count: partitions })) });
      return true;
    } catch (error) {
      if ((error as { type?: string }).type !== 'INVALID_PARTITIONS' || Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Creates any missing event topic and grows any with fewer partitions than asked (never fewer:
 * Kafka cannot remove partitions), then returns once every broker serves them, the grown ones
 * with their new count. With `retentionHours`, every topic keeps its messages that long (its own
 * `retention.ms`, set on new topics and changed on existing ones), whatever the brokers' default.
 * Returns the topics it created.
 */
export async function ensureTopics(admin: Admin, prefix: string, partitions: number, options: { retentionHours?: number } = {}): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const names = TOPIC_KINDS.map((kind) => topicNames(prefix)[kind]);
  const retention = options.retentionHours === undefined ? [] : [{ name: RETENTION_MS, value: String(options.retentionHours * 3_600_000) }];
  let missing = names.filter((name) => !existing.has(name));
  if (missing.length > 0) {
    // No replication factor: the brokers' default.replication.factor and min.insync.replicas
    // apply, 1 on a single broker and 3 and 2 in cluster mode (infra/cluster/kafka-cluster.sh).
    const created = await admin.createTopics({
      waitForLeaders: false,
      topics: missing.map((topic) => ({ topic, numPartitions: partitions, configEntries: retention })),
    });
    // On a cluster, a broker that has not heard yet of topics just made through another lists them
    // as missing; Kafka then answers that every one exists (false), and none was created here.
    if (!created) missing = [];
    await waitUntilServed(admin, names);
  }
  // Raising KAFKA_PARTITIONS grows existing topics too (Kafka can add partitions, never remove
  // them); keys then map to new partitions, so do it while producers are quiet.
  const present = names.filter((name) => !missing.includes(name));
  if (present.length > 0 && (await growPartitions(admin, present, partitions))) await waitUntilServed(admin, present, partitions);
  if (present.length > 0 && retention.length > 0) await setRetention(admin, present, retention[0]!.value);
  return missing;
}

const RETENTION_MS = 'retention.ms';
// kafkajs is CommonJS, and Node finds these enums only on its default export.
const { ConfigResourceTypes, ConfigSource } = kafkajs;

/**
 * Sets `retention.ms` on the topics whose own differs. Kafka's AlterConfigs replaces a topic's
 * whole set of its own settings, so those an operator gave the topic are sent again with it. A
 * broker reads them from its copy of the cluster's metadata, behind a change: on three brokers a
 * setting one broker already showed was missing from the next answer, so a setting changed
 * shortly before a service starts may be lost on a cluster (kafkajs has no
 * IncrementalAlterConfigs, which would change `retention.ms` alone).
 */
async function setRetention(admin: Admin, topics: string[], retentionMs: string): Promise<void> {
  const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name })) });
  const changes = resources
    .filter((r) => r.configEntries.find((e) => e.configName === RETENTION_MS)?.configValue !== retentionMs)
    .map((r) => ({
      type: ConfigResourceTypes.TOPIC,
      name: r.resourceName,
      configEntries: [
        ...r.configEntries.filter((e) => e.configSource === ConfigSource.TOPIC_CONFIG && e.configName !== RETENTION_MS).map((e) => ({ name: e.configName, value: e.configValue })),
        { name: RETENTION_MS, value: retentionMs },
      ],
    }));
  if (changes.length > 0) await admin.alterConfigs({ validateOnly: false, resources: changes });
}

/**
 * Whether a broker answers, for `/_ready`: an admin client of its own that never retries, so an
 * unreachable broker answers "no" within the connection timeout rather than after the shared
 * client's retry schedule. A failed check drops the connection and the next one starts afresh.
 */
export function kafkaReachability(kafka: Kafka): { check: () => Promise<boolean>; close: () => Promise<void> } {
  let admin: Admin | null = null;
  return {
    async check() {
      try {
        admin ??= kafka.admin({ retry: { retries: 0 } });
        await admin.connect();
        await admin.describeCluster();
        return true;
      } catch {
        const broken = admin;
        admin = null;
        await broken?.disconnect().catch(() => undefined);
        return false;
      }
    },
    async close() {
      await admin?.disconnect();
      admin = null;
    },
  };
}
