import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchExportStore, DestinationGuard, createDestination, destinationPolicy, type BatchExportRow, type DestinationType } from '@tributary/batch-exports';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { createLogger } from '@tributary/logger';
import { createPool, eventRow, testConfig, EVENT_ROW_COLUMNS } from '@tributary/test-support';
import type { RunExecutorDeps } from '../src/batch-exports/run-executor.js';
import { WINDOW } from './export-window.js';

export const config = testConfig();
export const pool = createPool(config, { max: 4 });
export const clickhouse = createClickHouse(config, { requestTimeoutMs: 120_000 });
export const store = new BatchExportStore(pool);
export const logger = createLogger('export-test', config.logLevel);

/** The tests' destinations are this machine's S3Proxy, Postgres and HTTP receivers: loopback is allowed, the stack's own ports still refused. */
export const localGuard = new DestinationGuard(destinationPolicy({ ...config, batchExportAllowedDestinations: ['127.0.0.0/8'] }));

export const executorDeps = (partRecords = 1_000, leaseMs = 30_000, partsInFlight = config.batchExportPartsInFlight, guard = localGuard): RunExecutorDeps => ({
  store,
  clickhouse,
  createDestination: (spec) => createDestination(spec, guard),
  logger,
  partRecords,
  partsInFlight,
  leaseMs,
});

export { WINDOW };
const stored = (offsetMs: number) => new Date(WINDOW.start.getTime() + offsetMs).toISOString().slice(0, 19).replace('T', ' ');

/**
 * `count` events of the project stored (inserted_at) in WINDOW, spread over it, plus events the
 * export must leave out: stored just before and at the window's end, and another project's.
 */
export async function storeWindowEvents(teamId: number, otherTeamId: number, count: number): Promise<void> {
  const span = WINDOW.end.getTime() - WINDOW.start.getTime();
  const rows = Array.from({ length: count }, (_, i) =>
    eventRow(teamId, `user-${i % 50}`, i % 3 ? '$pageview' : 'signed up', '2024-03-01 09:00:00', { n: i, $browser: 'Chrome' }, { inserted_at: stored(Math.floor((i * span) / count)) }),
  );
  rows.push(eventRow(teamId, 'early', 'x', '2024-03-01 09:00:00', {}, { inserted_at: stored(-1000) }));
  rows.push(eventRow(teamId, 'late', 'x', '2024-03-01 09:00:00', {}, { inserted_at: stored(span) }));
  rows.push(eventRow(otherTeamId, 'theirs', '$pageview', '2024-03-01 09:00:00', {}, { inserted_at: stored(60_000) }));
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, rows);
}

/** The uuids of the project's events stored in WINDOW, sorted: what a complete export holds. */
export async function windowUuids(teamId: number): Promise<string[]> {
  const rows = await clickhouse.query<{ uuid: string }>(
    sql`SELECT DISTINCT toString(uuid) AS uuid FROM events WHERE team_id = ${teamId} AND inserted_at >= toDateTime('2024-03-01 10:00:00', 'UTC') AND inserted_at < toDateTime('2024-03-01 11:00:00', 'UTC') ORDER BY uuid`,
  );
  return rows.map((r) => r.uuid);
}

/**
 * A paused export with one run over `window` (WINDOW unless given), as its schedule would have made it: the stack's own
 * worker, running beside the tests, leaves the runs of paused exports alone (not a backfill's).
 */
export async function exportWithRun(
  teamId: number,
  type: DestinationType,
  destinationConfig: Record<string, unknown>,
  model: 'events' | 'persons' = 'events',
  window = WINDOW,
): Promise<{ row: BatchExportRow; runId: string }> {
  const row = await store.create(teamId, { name: 'test', model, destination: { type, config: destinationConfig }, interval: 'hour', paused: true, start_at: null, end_at: null }, new Date());
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO batch_export_runs (id, batch_export_id, team_id, data_interval_start, data_interval_end, status) VALUES (gen_random_uuid(), $1, $2, $3, $4, 'Starting') RETURNING id`,
    [row.id, teamId, window.start, window.end],
  );
  return { row, runId: rows[0]!.id };
}

export async function runRow(runId: string) {
  const { rows } = await pool.query('SELECT * FROM batch_export_runs WHERE id = $1', [runId]);
  return rows[0] as { status: string; records_completed: number; parts_completed: number; attempts: number; latest_error: string | null; records_total_count: number | null };
}

/** An HTTP destination server that keeps every batch it is sent, or answers `failWith`. */
export async function batchReceiver(): Promise<{ url: string; uuids: () => string[]; bodies: unknown[]; failWith: { status: number | null }; close: () => Promise<void> }> {
  const bodies: { batch: { uuid: string }[] }[] = [];
  const failWith = { status: null as number | null };
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      if (failWith.status) {
        res.writeHead(failWith.status).end();
        return;
      }
      bodies.push(JSON.parse(text) as { batch: { uuid: string }[] });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":1}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/batch/`,
    bodies,
    failWith,
    uuids: () => bodies.flatMap((b) => b.batch.map((e) => e.uuid)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A database of its own on this machine's Postgres, as a Postgres destination's. */
export async function destinationDatabase(name: string): Promise<Record<string, unknown>> {
  await pool.query(`CREATE DATABASE ${name}`);
  const url = new URL(config.databaseUrl);
  return { user: url.username || 'postgres', password: url.password, host: url.hostname, port: Number(url.port || 5432), database: name, schema: 'public', table_name: 'events' };
}
