import type { Queue } from 'bullmq';
import type { ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import type { Redis } from '@tributary/redis';
import { createTestTenant, testConfig, type TestTenant } from '@tributary/test-support';
import { buildApi } from '../src/api-app.js';

/** The api service in-process on a free port, against the real stores. */
export interface ApiHarness {
  url: string;
  config: Config;
  pool: Pool;
  clickhouse: ClickHouse;
  redis: Redis;
  deletionQueue: Queue;
  request: (method: string, path: string, key: string | null, body?: unknown) => Promise<{ status: number; body: any; headers: Headers; text: string }>;
  close: () => Promise<void>;
}

/** Built by the same `buildApi` as `main.ts`; the person changes it publishes go to the real topic, where the running ingest applies them. */
export async function startApi(overrides: Partial<Config> = {}): Promise<ApiHarness> {
  const config = testConfig({ apiPort: 0, host: '127.0.0.1', ...overrides });
  const { options, stores } = await buildApi({ config, logger: createLogger('api-test', config.logLevel) });
  const runtime = await startServiceRuntime({ ...options, shutdownTimeoutMs: 1000 }, false);
  const url = `http://127.0.0.1:${runtime.port}`;
  return {
    url,
    config,
    pool: stores.pool,
    clickhouse: stores.clickhouse,
    redis: stores.redis,
    deletionQueue: stores.deletionQueue,
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

/**
 * The setup every api test file shares: one service for the file and a fresh tenant (organization,
 * owner, project, key), stopped after the file's tests. Read `api` and `tenant` inside tests.
 */
export function useApi(overrides: Partial<Config> = {}): { readonly api: ApiHarness; readonly tenant: TestTenant } {
  const context = {} as { api: ApiHarness; tenant: TestTenant };
  beforeAll(async () => {
    context.api = await startApi(overrides);
    context.tenant = await createTestTenant(context.api.pool, context.api.config);
  });
  afterAll(async () => {
    await context.api.close();
  });
  return context;
}
