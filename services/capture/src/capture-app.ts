import type { Config } from '@tributary/config';
import { ControlPlaneStore, TokenResolver } from '@tributary/control-plane';
import { createMetrics, stopInOrder, type ServiceRuntimeOptions } from '@tributary/http';
import { PartitionCounts, createKafka, createProducer, kafkaReachability, produceMetrics, topicNames } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import { createPool, postgresAnswers, type Pool } from '@tributary/postgres';
import { createRedis, redisAnswers, type Redis } from '@tributary/redis';
import { captureMetrics } from './capture-metrics.js';
import { captureRoutes } from './capture-routes.js';
import { EventPublisher } from './event-publisher.js';
import { OverflowDetector } from './overflow-detector.js';

export interface CaptureBuildDeps {
  config: Config;
  logger: Logger;
  /** False only in a test of capture with Kafka away: connecting would never succeed. */
  connectKafka?: boolean;
}

export interface CaptureStores {
  pool: Pool;
  redis: Redis;
}

/**
 * The capture service, connected: what `main.ts` runs and what the integration tests start on a
 * free port, so both build it the same way.
 */
export async function buildCapture({ config, logger, connectKafka = true }: CaptureBuildDeps): Promise<{ options: ServiceRuntimeOptions; stores: CaptureStores }> {
  const metrics = createMetrics('capture');
  const pool = createPool(config, { max: 5 });
  const redis = createRedis(config);
  const kafka = createKafka(config, logger, 'capture');
  const instrument = produceMetrics(metrics);
  const producers = Array.from({ length: config.captureKafkaProducers }, () => createProducer(kafka, instrument));
  // Capture chooses each event's partition itself, so it asks Kafka how many each topic has.
  const admin = kafka.admin();
  if (connectKafka) await Promise.all([admin.connect(), ...producers.map((producer) => producer.connect())]);

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
  return {
    stores: { pool, redis },
    options: {
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
      stop: stopInOrder(logger, [
        // In-flight requests have finished, so every acknowledged event is already in Kafka. The
        // other replicas go on counting this second with this one's last counts.
        ['kafka producers', () => Promise.all([admin.disconnect(), ...producers.map((producer) => producer.disconnect()), overflow.sync()])],
        ['kafka reachability', () => kafkaReachable.close()],
        ['postgres', () => pool.end()],
        ['redis', () => redis.disconnect()],
      ]),
    },
  };
}
