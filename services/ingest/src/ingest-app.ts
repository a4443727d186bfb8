import type { Kafka } from 'kafkajs';
import { createClickHouse, type ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { ControlPlaneStore, PersonCache, TokenResolver } from '@tributary/control-plane';
import { openGeoIp } from '@tributary/geoip';
import { createMetrics, stopInOrder, type ServiceRuntimeOptions } from '@tributary/http';
import { createKafka, createProducer, kafkaReachability, produceMetrics, topicNames, type RenewingProducer, type TopicNames } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import { createPool, postgresAnswers, type Pool } from '@tributary/postgres';
import { createRedis, redisAnswers, type Redis } from '@tributary/redis';
import { RowWriter } from './clickhouse-writer.js';
import { refusedRowLetter, sendDeadLetters } from './dead-letters.js';
import { DefinitionsRecorder } from './definitions/definitions-recorder.js';
import { DefinitionsWriter } from './definitions/definitions-writer.js';
import { EventProcessor } from './event-processor.js';
import { GroupStore } from './groups/group-store.js';
import { IngestConsumer } from './ingest-consumer.js';
import type { MessageProcessor } from './message-processor.js';
import { PersonOutbox } from './persons/person-outbox.js';
import { ingestMetrics, type IngestMetrics } from './ingest-metrics.js';

export interface IngestDeps {
  /** Without an insert interval, rows are inserted as soon as the previous insert is done. */
  config: Pick<Config, 'apiKeyPepper' | 'ingestPartitionsConcurrently' | 'ingestMaxQueuedEvents' | 'ingestInsertMaxRows'> & Partial<Pick<Config, 'ingestInsertIntervalMs' | 'ingestInsertQuietIntervalMs'>>;
  logger: Logger;
  pool: Pool;
  redis: Redis;
  clickhouse: ClickHouse;
  kafka: Kafka;
  producer: Pick<RenewingProducer, 'send'>;
  topics: TopicNames;
  groupId: string;
  metrics?: IngestMetrics;
}

/** The ingest consumer as the service runs it; tests may decorate the processor to observe or disturb it. */
export async function buildIngestConsumer(deps: IngestDeps, wrap: (processor: MessageProcessor) => MessageProcessor = (p) => p): Promise<IngestConsumer> {
  const { config, logger, pool, redis, clickhouse, kafka, producer, topics, groupId, metrics } = deps;
  const rowWriter = new RowWriter(clickhouse, {
    minIntervalMs: config.ingestInsertIntervalMs ?? 0,
    quietIntervalMs: config.ingestInsertQuietIntervalMs,
    maxRowsPerInsert: config.ingestInsertMaxRows,
  });
  const personCache = new PersonCache(redis);
  const definitions = new DefinitionsRecorder();
  const definitionsWriter = new DefinitionsWriter({ pool, recorder: definitions, logger, failed: (reason) => metrics?.definitionsFailed(reason) });
  const outbox = new PersonOutbox({
    pool,
    writer: rowWriter,
    sendRefusedRows: (rows) => sendDeadLetters(producer, topics.deadLetter, rows.map((row) => refusedRowLetter(row)), 'person outbox'),
    personCache,
    logger,
  });
  return new IngestConsumer({
    kafka,
    topics,
    groupId,
    writeRows: async (rows) => {
      // The definitions are written while ClickHouse takes the rows; their write never fails the chunk.
      const [refused] = await Promise.all([rowWriter.write(rows), definitionsWriter.record(rows.definitions)]);
      await outbox.acknowledge(rows.outbox);
      metrics?.written(rows, refused);
      return refused;
    },
    caughtUp: () => rowWriter.quiet(),
    companions: [outbox],
    processingConcurrency: config.ingestPartitionsConcurrently,
    maxQueuedEvents: config.ingestMaxQueuedEvents,
    producer,
    logger,
    processor: wrap(
      new EventProcessor({
        pool,
        definitions,
        tokens: new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis),
        groups: new GroupStore(pool),
        personCache,
        geoip: await openGeoIp(),
        logger,
      }),
    ),
  });
}

export interface IngestBuildDeps {
  config: Config;
  logger: Logger;
}

/**
 * The ingest service, connected: what `main.ts` runs. The consumer is started after the HTTP
 * runtime: joining the group waits for a crashed member's session to expire, and health answers
 * meanwhile while readiness says "not ready" until the consumer runs.
 */
export async function buildIngest({ config, logger }: IngestBuildDeps): Promise<{ options: ServiceRuntimeOptions; consumer: IngestConsumer }> {
  const registry = createMetrics('ingest');
  // Each partition being worked on holds a connection for its chunk's transaction; the outbox and the definitions writer one each.
  const pool = createPool(config, { max: config.ingestPartitionsConcurrently + 3 });
  const redis = createRedis(config);
  const clickhouse = createClickHouse(config);
  const kafka = createKafka(config, logger, 'ingest');
  const producer = createProducer(kafka, produceMetrics(registry));
  const admin = kafka.admin();
  const topics = topicNames(config.kafkaTopicPrefix);
  const kafkaReachable = kafkaReachability(kafka);
  await producer.connect();

  const consumer = await buildIngestConsumer({
    config,
    logger,
    pool,
    redis,
    clickhouse,
    kafka,
    producer,
    topics,
    groupId: config.ingestConsumerGroup,
    metrics: ingestMetrics(registry, { admin, groupId: config.ingestConsumerGroup, topics, logger }),
  });
  return {
    consumer,
    options: {
      name: 'ingest',
      logger,
      metrics: registry,
      host: config.host,
      port: config.ingestPort,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      // Every event needs Kafka, Postgres (persons) and ClickHouse (rows); Redis holds only the
      // person cache that decide reads, and a miss there falls back to Postgres.
      dependencies: {
        kafka: { check: async () => consumer.isRunning && (await kafkaReachable.check()), required: true },
        postgres: { check: () => postgresAnswers(pool), required: true },
        clickhouse: { check: () => clickhouse.ping(), required: true },
        redis: { check: () => redisAnswers(redis), required: false },
      },
      stop: stopInOrder(logger, [
        // The consumer writes and commits what it has taken before leaving the group.
        ['consumer', () => consumer.stop()],
        ['kafka admin', () => admin.disconnect()],
        ['kafka reachability', () => kafkaReachable.close()],
        ['kafka producer', () => producer.disconnect()],
        ['postgres', () => pool.end()],
        ['clickhouse', () => clickhouse.close()],
        ['redis', () => redis.disconnect()],
      ]),
    },
  };
}
