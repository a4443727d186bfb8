import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Sql, sql } from './sql.js';
import { ClickHouseError, createClickHouse, type ClickHouse, type ClickHouseConfig } from './client.js';
import { onCluster, renderStatement, topologyOf, type Topology, type TopologyConfig } from './topology.js';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../migrations');

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Splits a migration file on `;` at the end of a line; ClickHouse takes one statement a request. */
export function splitStatements(text: string): string[] {
  return text
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter((s) => s.length > 0);
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`ClickHouse migration ${file} is not named NNNN_name.sql`);
    migrations.push({ version: Number(match[1]), name: match[2]!, statements: splitStatements(await readFile(path.join(dir, file), 'utf8')) });
  }
  return migrations;
}

const ADD_COLUMN = /^ALTER TABLE \w+ ADD COLUMN /;
const DUPLICATE_COLUMN = 44;

/** 18.16 has no ADD COLUMN IF NOT EXISTS: a column a run that died half-way added already counts as added. */
export async function runStatement(clickhouse: ClickHouse, statement: string, topology: Topology): Promise<void> {
  for (const rendered of renderStatement(statement, topology)) {
    try {
      await clickhouse.command(Sql.trusted(rendered));
    } catch (error) {
      if (!(ADD_COLUMN.test(statement) && error instanceof ClickHouseError && error.code === DUPLICATE_COLUMN)) throw error;
    }
  }
}

async function ensureDatabase(config: ClickHouseConfig, topology: Topology): Promise<void> {
  const server = createClickHouse(config, { database: null });
  try {
    await server.command(Sql.trusted(`CREATE DATABASE IF NOT EXISTS ${topology.database}${onCluster(topology)}`));
  } finally {
    await server.close();
  }
}

/**
 * Applies numbered migrations not yet recorded in `schema_migrations`. Statements are written
 * to be re-runnable (IF NOT EXISTS, or see runStatement), so a run that died half-way can simply
 * run again.
 */
export async function migrateClickHouse(config: ClickHouseConfig & TopologyConfig, dir = MIGRATIONS_DIR): Promise<string[]> {
  const topology = topologyOf(config);
  await ensureDatabase(config, topology);
  const clickhouse = createClickHouse(config);
  try {
    await runStatement(
      clickhouse,
      "CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime('UTC')) ENGINE = MergeTree() ORDER BY version",
      topology,
    );
    const applied = new Set((await clickhouse.query<{ version: number }>(sql`SELECT version FROM schema_migrations`)).map((r) => Number(r.version)));
    const ran: string[] = [];
    for (const migration of await loadMigrations(dir)) {
      if (applied.has(migration.version)) continue;
      for (const statement of migration.statements) await runStatement(clickhouse, statement, topology);
      await clickhouse.insert('schema_migrations', ['version', 'name', 'applied_at'], [
        { version: migration.version, name: migration.name, applied_at: new Date().toISOString() },
      ]);
      ran.push(`${migration.version}_${migration.name}`);
    }
    return ran;
  } finally {
    await clickhouse.close();
  }
}
