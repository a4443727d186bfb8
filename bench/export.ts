/**
 * Batch exports against ClickHouse alone (issue 46): EXPORT_BENCH_EVENTS events (default
 * 5,000,000) of one project exported to S3 (S3Proxy, JSONLines gzip) and to Postgres (a fresh
 * database), each by a worker process of its own (bench/export-child.ts, running the export's runs
 * as the worker does, BATCH_EXPORT_PART_RECORDS records a part, default 10,000), against
 * `clickhouse-client` running the statement the export streams, `FORMAT JSONEachRow` to
 * /dev/null, in one run. Needs `make up`. Ends with one line:
 * RESULT s3_rows_per_s=<n> postgres_rows_per_s=<n> clickhouse_rows_per_s=<n> ratio=<s3/clickhouse>
 *
 * The events are loaded as bench/query.ts's (bench/bench-dataset.ts, kept in
 * .tributary/export-bench.json, EXPORT_BENCH_RELOAD=1 loads them again): ClickHouse stamps
 * `inserted_at` as they are loaded, within a minute or so, and the exports' windows are the days
 * (the export's interval) that minute falls in, run by a paused export's runs, as the schedule
 * makes them, so the stack's own worker leaves them alone. A destination's rows/s is the window's
 * rows over the worker's time running the runs (not its start-up); ClickHouse's is over
 * clickhouse-client's wall time, timed before the exports and after them, the faster counting.
 * After each export the destination must hold exactly the window's events (S3: lines in the
 * objects; Postgres: count(*)), or the bench says MISMATCH and exits 1, leaving the destination for
 * a look; otherwise the bucket and the database are removed. EXPORT_BENCH_PROFILE=1 runs the
 * workers with --cpu-prof (profiles in .tributary/export-bench-profiles).
 * Run: npx tsx bench/export.ts
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { open } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { BatchExportStore, intervalMs, windowStart, type DestinationType, type ExportWindow } from '@tributary/batch-exports';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';
import { createPool } from '@tributary/postgres';
import pg from 'pg';
import { countEventsWindow, eventsWindowStatement, EXPORT_READ_SETTINGS } from '../services/worker/src/batch-exports/window-reader.js';
import { benchProject, type Dataset } from './bench-dataset.js';
import { STATE_DIR, table } from './lib.js';

const total = Number(process.env.EXPORT_BENCH_EVENTS ?? 5_000_000);
const profile = Boolean(process.env.EXPORT_BENCH_PROFILE);
const INTERVAL = 'day';

const DATASET: Dataset = {
  slug: 'export-bench',
  events: total,
  spanDays: 30,
  distinctIds: 10_000,
  eventSql: "if(intHash32(number) % 5 = 0, '$pageview', 'button clicked')",
  distinctIdSql: 'number % 10000',
  personSql: (n) => n,
  reload: Boolean(process.env.EXPORT_BENCH_RELOAD),
};

const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const clickhouse = createClickHouse(config, { requestTimeoutMs: 900_000 });
const pool = createPool(config, { max: 2 });
const store = new BatchExportStore(pool);
const s3 = new S3Client({
  region: 'us-east-1',
  endpoint: config.s3Endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

const project = await benchProject(DATASET, { clickhouse, config });
const team = project.projectId;

// ---- The windows the events were stored in ------------------------------------------------------

const [span] = await clickhouse.query<{ first: string; last: string }>(
  sql`SELECT toString(min(inserted_at)) AS first, toString(max(inserted_at)) AS last FROM events WHERE team_id = ${team}`,
);
const utc = (text: string) => new Date(`${text.replace(' ', 'T')}Z`);
const windows: ExportWindow[] = [];
for (let start = windowStart(utc(span!.first), INTERVAL); start <= utc(span!.last); start = new Date(start.getTime() + intervalMs(INTERVAL))) {
  windows.push({ start, end: new Date(start.getTime() + intervalMs(INTERVAL)) });
}
const counts = await Promise.all(windows.map((w) => countEventsWindow(clickhouse, { teamId: team, ...w, by: 'inserted_at' })));
const rows = counts.reduce((sum, n) => sum + n, 0);
console.log(`project ${team}: ${rows.toLocaleString('en')} events stored ${span!.first} to ${span!.last} UTC, ${windows.length} ${INTERVAL} window(s)`);

// ---- ClickHouse alone ---------------------------------------------------------------------------

/** Seconds clickhouse-client takes to write the export's statement over all the windows as JSONEachRow to /dev/null. */
async function clickhouseSeconds(): Promise<number> {
  const statement = eventsWindowStatement({ teamId: team, start: windows[0]!.start, end: windows.at(-1)!.end, by: 'inserted_at', cursor: null });
  const url = new URL(config.clickhouseUrl);
  const settings = Object.entries(EXPORT_READ_SETTINGS).map(([name, value]) => `--${name}=${value}`);
  const args = ['--host', url.hostname, '--user', config.clickhouseUser, '--database', config.clickhouseDatabase, ...settings, '--query', `${statement.text} FORMAT JSONEachRow`];
  if (config.clickhousePassword) args.push('--password', config.clickhousePassword);
  const devNull = await open('/dev/null', 'w');
  const started = performance.now();
  try {
    const child = spawn('clickhouse-client', args, { stdio: ['ignore', devNull.fd, 'inherit'] });
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`clickhouse-client exited with ${code}`);
    return (performance.now() - started) / 1000;
  } finally {
    await devNull.close();
  }
}

// ---- The exports --------------------------------------------------------------------------------

interface WorkerReport {
  ms: number;
  writeMs: number;
  recordMs: number;
  peakRssMb: number;
}

/** A paused export to the destination, with one run per window, run by a worker process of its own. */
async function runExport(type: DestinationType, destinationConfig: Record<string, unknown>): Promise<WorkerReport> {
  const row = await store.create(team, { name: `export bench ${type}`, model: 'events', destination: { type, config: destinationConfig }, interval: INTERVAL, paused: true, start_at: null, end_at: null }, new Date());
  const runIds: string[] = [];
  for (const w of windows) {
    const { rows: made } = await pool.query<{ id: string }>(
      `INSERT INTO batch_export_runs (id, batch_export_id, team_id, data_interval_start, data_interval_end, status) VALUES (gen_random_uuid(), $1, $2, $3, $4, 'Starting') RETURNING id`,
      [row.id, team, w.start, w.end],
    );
    runIds.push(made[0]!.id);
  }
  const node = ['--import', 'tsx', ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${STATE_DIR}/export-bench-profiles`] : []), 'bench/export-child.ts', ...runIds];
  const child = spawn(process.execPath, node, { env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const { rows: runs } = await pool.query<{ status: string; records_completed: number; latest_error: string | null }>('SELECT status, records_completed, latest_error FROM batch_export_runs WHERE id = ANY($1)', [runIds]);
  await store.softDelete(team, row.id);
  const failed = runs.filter((run) => run.status !== 'Completed');
  if (code !== 0 || failed.length > 0) throw new Error(`the ${type} worker exited with ${code}; runs: ${JSON.stringify(runs)}`);
  const exported = runs.reduce((sum, run) => sum + Number(run.records_completed), 0);
  if (exported !== rows) mismatch(`the ${type} runs recorded ${exported} records, the windows hold ${rows}`);
  return JSON.parse(output.trim().split('\n').at(-1)!) as WorkerReport;
}

function mismatch(what: string): never {
  console.error(`\nMISMATCH: ${what}\n`);
  process.exit(1);
}

async function s3Export(): Promise<WorkerReport> {
  const bucket = `export-bench-${Date.now()}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const report = await runExport('S3', {
    bucket_name: bucket,
    region: 'us-east-1',
    prefix: 'events/',
    aws_access_key_id: config.s3AccessKeyId,
    aws_secret_access_key: config.s3SecretAccessKey,
    endpoint_url: config.s3Endpoint,
    compression: 'gzip',
    file_format: 'JSONLines',
  });
  const keys: string[] = [];
  for (let token: string | undefined; ; ) {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    keys.push(...(listed.Contents ?? []).map((object) => object.Key!));
    token = listed.NextContinuationToken;
    if (!token) break;
  }
  let lines = 0;
  for (const key of keys) {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const text = gunzipSync(await object.Body!.transformToByteArray());
    for (let at = text.indexOf(10); at !== -1; at = text.indexOf(10, at + 1)) lines++;
  }
  if (lines !== rows) mismatch(`bucket ${bucket} holds ${lines} lines in ${keys.length} objects, the windows ${rows} events`);
  // One by one: S3Proxy does not take DeleteObjects with the checksum header the SDK sends.
  for (const key of keys) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
  return report;
}

async function postgresExport(): Promise<WorkerReport> {
  const database = `export_bench_${Date.now()}`;
  await pool.query(`CREATE DATABASE ${database}`);
  const url = new URL(config.databaseUrl);
  const connection = { user: url.username || 'postgres', password: decodeURIComponent(url.password), host: url.hostname, port: Number(url.port || 5432) };
  const report = await runExport('Postgres', { ...connection, database, schema: 'public', table_name: 'events' });
  const client = new pg.Client({ ...connection, database });
  await client.connect();
  const { rows: counted } = await client.query<{ n: string }>('SELECT count(*) AS n FROM events');
  await client.end();
  if (Number(counted[0]!.n) !== rows) mismatch(`database ${database} holds ${counted[0]!.n} rows, the windows ${rows} events`);
  await pool.query(`DROP DATABASE ${database}`);
  return report;
}

// ---- The run ------------------------------------------------------------------------------------

const clickhouseBefore = await clickhouseSeconds();
const s3Report = await s3Export();
const postgresReport = await postgresExport();
const clickhouseAfter = await clickhouseSeconds();
const clickhouseS = Math.min(clickhouseBefore, clickhouseAfter);

const perSecond = (seconds: number) => Math.round(rows / seconds);
const exportRow = (name: string, report: WorkerReport) => ({
  '': name,
  rows,
  s: report.ms / 1000,
  'rows/s': perSecond(report.ms / 1000),
  'writing, s': report.writeMs / 1000,
  'recording parts, s': report.recordMs / 1000,
  'peak RSS, MB': report.peakRssMb,
});
table([
  { '': 'clickhouse-client > /dev/null', rows, s: clickhouseS, 'rows/s': perSecond(clickhouseS), 'writing, s': '', 'recording parts, s': '', 'peak RSS, MB': '' },
  exportRow('S3, JSONLines gzip', s3Report),
  exportRow('Postgres', postgresReport),
]);
console.log(`clickhouse-client: ${clickhouseBefore.toFixed(1)} s before the exports, ${clickhouseAfter.toFixed(1)} s after`);
console.log(`worker peak RSS: s3=${Math.round(s3Report.peakRssMb)} MB postgres=${Math.round(postgresReport.peakRssMb)} MB`);

const s3Rate = perSecond(s3Report.ms / 1000);
const clickhouseRate = perSecond(clickhouseS);
await pool.end();
await clickhouse.close();
s3.destroy();
console.log(`RESULT s3_rows_per_s=${s3Rate} postgres_rows_per_s=${perSecond(postgresReport.ms / 1000)} clickhouse_rows_per_s=${clickhouseRate} ratio=${(s3Rate / clickhouseRate).toFixed(2)}`);
