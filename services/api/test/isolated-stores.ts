import { Sql, createClickHouse, ident, onCluster, topologyOf } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { testConfig } from '@tributary/test-support';
import pg from 'pg';
import { buildDecide } from '../../decide/src/decide-app.js';
import { startApi, type ApiHarness } from './api-harness.js';

/**
 * A store set of a test's own: a Postgres database and a ClickHouse database named `name`, and a
 * queue prefix, on the shared servers, so a test may fill, migrate, restore and drop them without
 * touching what the stack and other tests use.
 */
export function isolatedStores(name: string): Partial<Config> {
  const shared = testConfig();
  const databaseUrl = new URL(shared.databaseUrl);
  databaseUrl.pathname = `/${name}`;
  return {
    databaseUrl: databaseUrl.toString(),
    clickhouseDatabase: name,
    queuePrefix: name,
    // The query endpoint's own user may read only the stack's database.
    queryClickhouseUser: shared.clickhouseUser,
    queryClickhousePassword: shared.clickhousePassword,
    batchExportAllowedDestinations: [new URL(shared.s3Endpoint).host],
  };
}

export async function dropIsolatedStores(config: Config): Promise<void> {
  const server = new URL(config.databaseUrl);
  server.pathname = '/postgres';
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(new URL(config.databaseUrl).pathname.slice(1))} WITH (FORCE)`).finally(() => client.end());
  const clickhouse = createClickHouse(config, { database: null });
  await clickhouse.command(Sql.trusted(`DROP DATABASE IF EXISTS ${ident(config.clickhouseDatabase).text}${onCluster(topologyOf(config))}`)).finally(() => clickhouse.close());
}

/** The api and decide in-process on free ports, against a store set. */
export interface ReadServices {
  api: ApiHarness;
  decide: ServiceRuntime;
  /** /decide's flags for a distinct id of a project, and whether it could compute them all. */
  flags: (apiToken: string, distinctId: string) => Promise<{ featureFlags: Record<string, boolean | string>; errorsWhileComputingFlags: boolean }>;
  close: () => Promise<void>;
}

export async function startReadServices(stores: Partial<Config>): Promise<ReadServices> {
  const api = await startApi(stores);
  const config = testConfig({ ...stores, decidePort: 0, host: '127.0.0.1' });
  const { options } = await buildDecide({ config, logger: createLogger('isolated-stores-test', config.logLevel) });
  const decide = await startServiceRuntime({ ...options, shutdownTimeoutMs: 1_000 }, false);
  return {
    api,
    decide,
    async flags(apiToken, distinctId) {
      const response = await fetch(`http://127.0.0.1:${decide.port}/decide/?v=3`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: apiToken, distinct_id: distinctId }),
      });
      const { featureFlags, errorsWhileComputingFlags } = (await response.json()) as { featureFlags: Record<string, boolean | string>; errorsWhileComputingFlags: boolean };
      return { featureFlags, errorsWhileComputingFlags };
    },
    async close() {
      await api.close();
      await decide.shutdown('test finished');
    },
  };
}
