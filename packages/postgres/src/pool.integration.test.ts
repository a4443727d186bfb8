import { loadConfig } from '@tributary/config';
import { createPool, withTransaction } from './pool.js';

/**
 * A Postgres restart closes every idle connection from the server's side. The pool reports that
 * as an 'error' event, which killed every service when nothing listened (found by the chaos suite).
 */
test('a pool survives the server closing its idle connections, and the next query reconnects', async () => {
  const config = loadConfig();
  const pool = createPool(config, { max: 2 });
  const admin = createPool(config, { max: 1 });
  try {
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(again.rows[0]!.one).toBe(1);
  } finally {
    await Promise.all([pool.end(), admin.end()]);
  }
});

test('a transaction whose connection the server closes fails by itself, without taking the process down', async () => {
  const config = loadConfig();
  const pool = createPool(config, { max: 2 });
  const admin = createPool(config, { max: 1 });
  try {
    const failure = await withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await client.query('SELECT 1');
    }).then(() => null, (error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
  } finally {
    await Promise.all([pool.end(), admin.end()]);
  }
});
