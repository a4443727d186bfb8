import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Config } from '@tributary/config';
import { ensureDatabase } from './pool.js';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../migrations');

/** Applies pending Postgres migrations (recorded in `pgmigrations`); a no-op when up to date. */
export async function migratePostgres(config: Pick<Config, 'databaseUrl'>, dir = MIGRATIONS_DIR): Promise<string[]> {
  await ensureDatabase(config);
  const ran = await runner({
    databaseUrl: config.databaseUrl,
    dir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Number.POSITIVE_INFINITY,
    log: () => undefined,
    verbose: false,
  });
  return ran.map((m) => m.name);
}
