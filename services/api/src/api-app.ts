import { Queue } from 'bullmq';
import { createClickHouse, type ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { stopInOrder, type ServiceRuntimeOptions } from '@tributary/http';
import { DELETION_QUEUE } from '@tributary/deletions';
import { createKafka, createProducer, kafkaReachability, type Admin, type RenewingProducer } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import { createPool, postgresAnswers, type Pool } from '@tributary/postgres';
import { loadHogQLParser } from '@tributary/hogql';
import { PropertyReadCounter, createRedis, redisAnswers, type Redis } from '@tributary/redis';
import { StatusHistory } from './operations/status-history.js';
import { apiDeps, mountApiRoutes } from './api-routes.js';

export interface ApiStores {
  pool: Pool;
  clickhouse: ClickHouse;
  /** The query endpoint's own connections, as its read-only user (QUERY_CLICKHOUSE_USER), with a timeout past its queries' longest run, so they never hold the api's other reads. */
  queryClickhouse: ClickHouse;
  redis: Redis;
  producer: RenewingProducer;
  admin: Admin;
  deletionQueue: Queue;
}

/**
 * The api service, connected: what `main.ts` runs and what the integration tests start on a free
 * port, so both build it the same way. The stores are returned too, for tests to set up data.
 */
export interface ApiBuildDeps {
  config: Config;
  logger: Logger;
}

export async function buildApi({ config, logger }: ApiBuildDeps): Promise<{ options: ServiceRuntimeOptions; stores: ApiStores }> {
  const pool = createPool(config);
  const clickhouse = createClickHouse(config);
  // As ClickHouse's read-only user: SQL a client shaped cannot write, whatever the printer let through.
  const queryClickhouse = createClickHouse(
    { ...config, clickhouseUser: config.queryClickhouseUser, clickhousePassword: config.queryClickhousePassword },
    { requestTimeoutMs: (config.queryMaxExecutionTimeS + 10) * 1000 },
  );
  await loadHogQLParser();
  const redis = createRedis(config);
  const kafka = createKafka(config, logger, 'api');
  const producer = createProducer(kafka);
  await producer.connect();
  // The status report's: Kafka offsets, and the deletion schedule the worker registered.
  const admin = kafka.admin();
  const queueConnection = createRedis(config, { forQueues: true });
  const deletionQueue = new Queue(DELETION_QUEUE, { connection: queueConnection, prefix: config.queuePrefix });
  // As the worker's (see startDeletionScheduler): a lost Redis connection is an 'error' event, logged here rather than printed raw by BullMQ.
  deletionQueue.on('error', (error) => logger.warn({ err: error }, 'deletion queue: Redis error; BullMQ reconnects'));
  const kafkaReachable = kafkaReachability(kafka);
  const propertyReads = new PropertyReadCounter(redis).start((error) => logger.warn({ err: error }, 'property read counts: a batch was lost'));
  const stores = { pool, clickhouse, queryClickhouse, redis, producer, admin, deletionQueue, propertyReads };
  const stopSampling = new StatusHistory({ redis, serviceUrls: config.serviceUrls }).start((error) => logger.warn({ err: error }, 'status history: a sample was lost'));
  return {
    stores,
    options: {
      name: 'api',
      logger,
      host: config.host,
      port: config.apiPort,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      trustedProxies: config.trustedProxies,
      routes: (app) => mountApiRoutes(app, apiDeps(config, stores)),
      // Kafka carries only person edits and Redis only rate limits and the deletion queue: the
      // rest of the API works without them.
      dependencies: {
        postgres: { check: () => postgresAnswers(pool), required: true },
        clickhouse: { check: () => clickhouse.ping(), required: true },
        kafka: { check: kafkaReachable.check, required: false },
        redis: { check: () => redisAnswers(redis), required: false },
      },
      stop: stopInOrder(logger, [
        ['status sampling', () => stopSampling()],
        ['kafka producer', () => producer.disconnect()],
        ['kafka admin', () => admin.disconnect()],
        ['kafka reachability', () => kafkaReachable.close()],
        ['deletion queue', () => deletionQueue.close()],
        ['redis queue connection', () => queueConnection.disconnect()],
        ['property read counts', () => propertyReads.stop()],
        ['postgres', () => pool.end()],
        ['clickhouse', () => clickhouse.close()],
        ['query clickhouse', () => queryClickhouse.close()],
        ['redis', () => redis.disconnect()],
      ]),
    },
  };
}
