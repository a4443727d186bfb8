import pg from 'pg';
import type { Config } from '@tributary/config';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// BIGINT ids come back as strings by default; Tributary's ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createPool(config: Pick<Config, 'databaseUrl'>, options: { max?: number; statementTimeoutMs?: number } = {}): Pool {
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: options.max ?? 10,
    connectionTimeoutMillis: 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
  });
  // A connection that the server closes (a restart, a failover) emits 'error', on the pool while
  // it is idle and on the client while it is checked out between two queries of a transaction;
  // an 'error' event nobody listens to kills the process, and every service crashed on a
  // Postgres restart (found by the chaos suite). The pool drops such a connection, the next
  // query opens a new one, and the work that was using it fails with its own error.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs `work` in a transaction, committing on success and rolling back on any error. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Creates the configured database when the server does not have it yet. */
export async function ensureDatabase(config: Pick<Config, 'databaseUrl'>): Promise<void> {
  const target = new URL(config.databaseUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(config.databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        // Another process created it between the check and the create.
        if (error.code !== '42P04') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

/** Whether Postgres answers a trivial query, for `/_ready`. */
export function postgresAnswers(pool: Pool): Promise<boolean> {
  return pool.query('SELECT 1').then(() => true);
}
