import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool, postgresAnswers } from '@tributary/postgres';
import { createRedis, redisAnswers } from '@tributary/redis';
import { createClickHouse } from '@tributary/clickhouse';
import { createKafka, createProducer, kafkaReachability, produceMetrics, topicNames } from '@tributary/kafka';
import { createMetrics, startServiceRuntime } from '@tributary/http';
import { buildIngestConsumer } from './ingest-app.js';
import { ingestMetrics } from './ingest-metrics.js';

const config = loadConfig(process.env, {}, 'ingest');
const logger = createLogger('ingest', config.logLevel);
const registry = createMetrics('ingest');
// Each partition being worked on holds a connection for its chunk's transaction.
const pool = createPool(config, { max: config.ingestPartitionsConcurrently + 2 });
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
await startServiceRuntime({
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
  stop: async () => {
    // The consumer writes and commits what it has taken before leaving the group.
    await consumer.stop();
    await admin.disconnect();
    await kafkaReachable.close();
    await producer.disconnect();
    await pool.end();
    await clickhouse.close();
    redis.disconnect();
  },
});
// Joining the group waits for a crashed member's session to expire; health answers meanwhile and
// readiness says "not ready" until the consumer runs.
await consumer.start();
