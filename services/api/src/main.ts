import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool } from '@tributary/postgres';
import { createClickHouse } from '@tributary/clickhouse';
import { createRedis } from '@tributary/redis';
import { ControlPlaneStore, FeatureFlagStore } from '@tributary/control-plane';
import { startServiceRuntime } from '@tributary/http';
import { createKafka, createProducer, topicNames } from '@tributary/kafka';
import { mountApiRoutes } from './api-app.js';
import { PersonEventPublisher } from './persons/person-event-publisher.js';

const config = loadConfig();
const logger = createLogger('api', config.logLevel);
const pool = createPool(config);
const clickhouse = createClickHouse(config);
const redis = createRedis(config);
const producer = createProducer(createKafka(config, logger, 'api'));
await producer.connect();

await startServiceRuntime({
  name: 'api',
  logger,
  host: config.host,
  port: config.apiPort,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  routes: (app) =>
    mountApiRoutes(app, {
      store: new ControlPlaneStore(pool, config.apiKeyPepper),
      flags: new FeatureFlagStore(pool),
      clickhouse,
      pool,
      redis,
      personEvents: new PersonEventPublisher(producer, topicNames(config.kafkaTopicPrefix).realtime, config.kafkaProduceTimeoutMs),
      publicUrl: config.publicUrl,
      rateLimitPerMinute: config.apiRateLimitPerMinute,
    }),
  ready: async () => (await pool.query('SELECT 1').then(() => true)) && (await clickhouse.ping()),
  stop: async () => {
    await producer.disconnect();
    await pool.end();
    await clickhouse.close();
    redis.disconnect();
  },
});
