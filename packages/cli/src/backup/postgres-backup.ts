import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { MIGRATIONS_DIR, ensureDatabase, migratePostgres } from '@tributary/postgres';
import type { PostgresDump } from './backup-manifest.js';

const run = promisify(execFile);
const DUMP_FILE = 'postgres.dump';
/** node-pg-migrate's record of what ran: copied with the rest, and read to refuse a newer backup. */
const MIGRATIONS_TABLE = 'pgmigrations';

async function withClient<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Runs pg_dump or pg_restore on the database: the password goes in PGPASSWORD, never on the
 * command line, where every user of the machine could read it. They name what went wrong on
 * stderr; the rest of their output is noise.
 */
async function runTool(tool: string, databaseUrl: string, args: string[]): Promise<void> {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  try {
    await run(tool, [...args, `--dbname=${url.toString()}`], { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } });
  } catch (error) {
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    if (code === 'ENOENT') throw new Error(`${tool} is not installed: install the PostgreSQL client tools of the server's major version or later`);
    throw new Error(`${tool} failed: ${(stderr ?? String(error)).trim()}`);
  }
}

/**
 * The whole database as one pg_dump archive (custom format: compressed, restorable table by
 * table), taken in one transaction, so it is consistent with itself while the services write.
 */
export async function dumpPostgres(databaseUrl: string, dir: string): Promise<PostgresDump> {
  await runTool('pg_dump', databaseUrl, ['--format=custom', '--no-owner', '--no-privileges', `--file=${path.join(dir, DUMP_FILE)}`]);
  const migrations = await withClient(databaseUrl, async (client) => (await client.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`)).rows.map((r) => r.name));
  return { file: DUMP_FILE, migrations };
}

/** Tables of the database's public schema that hold a row; none when the database does not exist. */
export async function postgresTablesWithRows(databaseUrl: string): Promise<string[]> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const server = new URL(databaseUrl);
  server.pathname = '/postgres';
  const exists = await withClient(server.toString(), async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);
  if (!exists) return [];
  return withClient(databaseUrl, async (client) => {
    const tables = await client.query<{ table: string }>("SELECT tablename AS table FROM pg_tables WHERE schemaname = 'public' AND tablename <> $1 ORDER BY tablename", [MIGRATIONS_TABLE]);
    const found: string[] = [];
    for (const { table } of tables.rows) {
      const rows = await client.query(`SELECT 1 FROM ${pg.escapeIdentifier(table)} LIMIT 1`);
      if (rows.rowCount !== 0) found.push(table);
    }
    return found;
  });
}

/** Migrations a backup records that this release does not have: it was taken by a newer one. */
export async function unknownPostgresMigrations(dump: PostgresDump): Promise<string[]> {
  const known = new Set((await readdir(MIGRATIONS_DIR)).map((file) => file.replace(/\.[a-z]+$/, '')));
  return dump.migrations.filter((name) => !known.has(name));
}

/**
 * Makes the database again from the archive, in one transaction: its public schema emptied first
 * (the caller checked that it may be), the archive restored, then this release's migrations that
 * the backup had not run yet.
 */
export async function restorePostgres(databaseUrl: string, dir: string, dump: PostgresDump): Promise<void> {
  await ensureDatabase({ databaseUrl });
  await withClient(databaseUrl, (client) => client.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public'));
  await runTool('pg_restore', databaseUrl, ['--single-transaction', '--exit-on-error', '--no-owner', '--no-privileges', path.join(dir, dump.file)]);
  await migratePostgres({ databaseUrl });
}
