import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool, postgresAnswers } from '@tributary/postgres';
import { createRedis, redisAnswers } from '@tributary/redis';
import { ControlPlaneStore, TokenResolver } from '@tributary/control-plane';
import { PartitionCounts, createKafka, createProducer, kafkaReachability, produceMetrics, topicNames } from '@tributary/kafka';
import { createMetrics, runAsWorkers, startServiceRuntime } from '@tributary/http';
import { captureMetrics } from './capture-metrics.js';
import { captureRoutes } from './capture-routes.js';
import { EventPublisher } from './event-publisher.js';
import { OverflowDetector } from './overflow-detector.js';

const config = loadConfig(process.env, {}, 'capture');
const logger = createLogger('capture', config.logLevel);
await runAsWorkers('capture', config.captureWorkers, logger);
const metrics = createMetrics('capture');
const pool = createPool(config, { max: 5 });
const redis = createRedis(config);
const kafka = createKafka(config, logger, 'capture');
const instrument = produceMetrics(metrics);
const producers = Array.from({ length: config.captureKafkaProducers }, () => createProducer(kafka, instrument));
// Capture chooses each event's partition itself, so it asks Kafka how many each topic has.
const admin = kafka.admin();
await Promise.all([admin.connect(), ...producers.map((producer) => producer.connect())]);

const topics = topicNames(config.kafkaTopicPrefix);
const overflow = new OverflowDetector(redis, config.captureOverflowEventsPerSecond);
const publisher = new EventPublisher(
  producers,
  topics,
  new PartitionCounts(admin, [topics.realtime, topics.historical, topics.overflow]),
  overflow,
  config.kafkaProduceTimeoutMs,
);
const kafkaReachable = kafkaReachability(kafka);
const tokens = new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis);

await startServiceRuntime({
  name: 'capture',
  logger,
  metrics,
  host: config.host,
  port: config.capturePort,
  trustedProxies: config.trustedProxies,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  direct: captureRoutes({ tokens, publisher, logger, metrics: captureMetrics(metrics), maxBatchBytes: config.captureMaxBatchBytes, maxEventBytes: config.captureMaxEventBytes }),
  // Tokens are cached and overflow detection counts in memory: only Kafka is needed to take events.
  dependencies: {
    kafka: { check: kafkaReachable.check, required: true },
    postgres: { check: () => postgresAnswers(pool), required: false },
    redis: { check: () => redisAnswers(redis), required: false },
  },
  stop: async () => {
    // In-flight requests have finished, so every acknowledged event is already in Kafka. The
    // other replicas go on counting this second with this one's last counts.
    await Promise.all([admin.disconnect(), ...producers.map((producer) => producer.disconnect()), overflow.sync()]);
    await kafkaReachable.close();
    await pool.end();
    redis.disconnect();
  },
});
