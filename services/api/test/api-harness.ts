import { createClickHouse, type ClickHouse } from '@tributary/clickhouse';
import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { createKafka, createProducer } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createPool, type Pool } from '@tributary/postgres';
import { createRedis, type Redis } from '@tributary/redis';
import { testConfig } from '@tributary/test-support';
import type { Config } from '@tributary/config';
import { apiDeps, mountApiRoutes } from '../src/api-app.js';

/** The api service in-process on a free port, against the real stores. */
export interface ApiHarness {
  url: string;
  config: Config;
  pool: Pool;
  clickhouse: ClickHouse;
  redis: Redis;
  request: (method: string, path: string, key: string | null, body?: unknown) => Promise<{ status: number; body: any; headers: Headers; text: string }>;
  close: () => Promise<void>;
}

export async function startApi(overrides: Partial<Config> = {}): Promise<ApiHarness> {
  const config = testConfig({ apiPort: 0, ...overrides });
  const pool = createPool(config, { max: 4 });
  const clickhouse = createClickHouse(config);
  const redis = createRedis(config);
  const logger = createLogger('api-test', config.logLevel);
  // The real topic: the running ingest service applies person changes the API publishes.
  const producer = createProducer(createKafka(config, logger, 'api-test'));
  await producer.connect();
  const runtime: ServiceRuntime = await startServiceRuntime(
    {
      name: 'api-test',
      logger,
      host: '127.0.0.1',
      port: 0,
      shutdownTimeoutMs: 1000,
      routes: (app) =>
        mountApiRoutes(app, apiDeps(config, { pool, clickhouse, redis, producer })),
      ready: async () => true,
      stop: async () => {
        await producer.disconnect();
        await pool.end();
        await clickhouse.close();
        redis.disconnect();
      },
    },
    false,
  );
  const url = `http://127.0.0.1:${runtime.port}`;
  return {
    url,
    config,
    pool,
    clickhouse,
    redis,
    async request(method, path, key, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: response.status, body: parsed, headers: response.headers, text };
    },
    close: () => runtime.shutdown('test finished'),
  };
}
