import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool } from '@tributary/postgres';
import { createClickHouse } from '@tributary/clickhouse';
import { createRedis } from '@tributary/redis';
import { startServiceRuntime } from '@tributary/http';
import { createKafka, createProducer } from '@tributary/kafka';
import { apiDeps, mountApiRoutes } from './api-app.js';

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
    mountApiRoutes(app, apiDeps(config, { pool, clickhouse, redis, producer })),
  ready: async () => (await pool.query('SELECT 1').then(() => true)) && (await clickhouse.ping()),
  stop: async () => {
    await producer.disconnect();
    await pool.end();
    await clickhouse.close();
    redis.disconnect();
  },
});
