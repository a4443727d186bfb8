import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createRedis, redisAnswers } from '@tributary/redis';
import { createPool, postgresAnswers } from '@tributary/postgres';
import { createClickHouse } from '@tributary/clickhouse';
import { createMetrics, startServiceRuntime } from '@tributary/http';
import { startDeletionScheduler } from './deletion-scheduler.js';
import { queueMetrics } from './worker-metrics.js';

const config = loadConfig();
const logger = createLogger('worker', config.logLevel);
const redis = createRedis(config);
const pool = createPool(config, { max: 3 });
const clickhouse = createClickHouse(config, { requestTimeoutMs: 120_000 });
const connection = createRedis(config, { forQueues: true });
const scheduler = await startDeletionScheduler({ connection, pool, clickhouse, database: config.clickhouseDatabase, logger });
const metrics = createMetrics('worker');
queueMetrics(metrics, { queue: scheduler.queue, worker: scheduler.worker, logger });

await startServiceRuntime({
  name: 'worker',
  logger,
  metrics,
  host: config.host,
  port: config.workerPort,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  // The queue lives in Redis; Postgres and ClickHouse are needed only while the weekly batch runs.
  dependencies: {
    redis: { check: async () => (await redisAnswers(redis)) && scheduler.worker.isRunning(), required: true },
    postgres: { check: () => postgresAnswers(pool), required: false },
    clickhouse: { check: () => clickhouse.ping(), required: false },
  },
  stop: async () => {
    await scheduler.close();
    connection.disconnect();
    await pool.end();
    await clickhouse.close();
    redis.disconnect();
  },
});
