import { spawn, type ChildProcess } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { createRedis } from '@tributary/redis';
import { createTestTenant, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { startExportQueue } from '../src/batch-exports/export-queue.js';
import { executeRun, type RunExecutorDeps } from '../src/batch-exports/run-executor.js';
import {
  batchReceiver,
  clickhouse,
  config,
  destinationDatabase,
  executorDeps,
  exportWithRun,
  pool,
  runRow,
  store,
  storeWindowEvents,
  windowUuids,
} from './export-fixture.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
let tenant: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  other = await createTestTenant(pool, config);
  await storeWindowEvents(tenant.project.id, other.project.id, 2_500);
});

afterAll(async () => {
  await pool.end();
  await clickhouse.close();
});

const s3 = new S3Client({
  endpoint: config.s3Endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey },
  // S3Proxy has no trailing checksums.
  requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
});

async function newBucket(): Promise<string> {
  const bucket = uniqueName('exports').toLowerCase().replace(/[^a-z0-9-]/g, '-');
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

const s3Config = (bucket: string) => ({
  bucket_name: bucket, region: 'us-east-1', prefix: 'events/{year}/{month}/{day}', endpoint_url: config.s3Endpoint,
  aws_access_key_id: config.s3AccessKeyId, aws_secret_access_key: config.s3SecretAccessKey, compression: 'gzip', file_format: 'JSONLines',
});

/** The bucket's keys, and the uuids of the events in its files, sorted (a uuid written twice shows twice). */
async function bucketContents(bucket: string): Promise<{ keys: string[]; uuids: string[] }> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1000 }));
  const keys = (listed.Contents ?? []).map((o) => o.Key!).sort();
  const uuids: string[] = [];
  for (const key of keys) {
    const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray();
    for (const line of gunzipSync(body).toString().split('\n').filter(Boolean)) uuids.push((JSON.parse(line) as { uuid: string }).uuid);
  }
  return { keys, uuids: uuids.sort() };
}

async function destinationRows(database: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: config.databaseUrl.replace(/\/[^/]+$/, `/${database}`) });
  await client.connect();
  try {
    return (await client.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM events ORDER BY uuid')).rows.map((r) => r.uuid);
  } finally {
    await client.end();
  }
}

describe('a batch export run', () => {
  it('exports its window to Postgres part by part, and a retry writes nothing twice', async () => {
    const database = uniqueName('export_pg').toLowerCase().replace(/[^a-z0-9_]/g, '_');
    const { runId } = await exportWithRun(tenant.project.id, 'Postgres', await destinationDatabase(database));
    expect(await executeRun(runId, executorDeps(1_000), false)).toBe('completed');
    expect(await runRow(runId)).toMatchObject({ status: 'Completed', records_completed: 2500, records_total_count: 2500, parts_completed: 3 });
    const expected = await windowUuids(tenant.project.id);
    expect(expected).toHaveLength(2_500);
    expect(await destinationRows(database)).toEqual(expected);

    // A retried run resumes after its last part, and a run written again from the start merges by uuid.
    await store.retry((await pool.query('SELECT batch_export_id FROM batch_export_runs WHERE id = $1', [runId])).rows[0].batch_export_id, runId);
    await executeRun(runId, executorDeps(1_000), false);
    await pool.query("UPDATE batch_export_runs SET cursor = NULL, parts_completed = 0, status = 'Starting' WHERE id = $1", [runId]);
    await executeRun(runId, executorDeps(700), false);
    expect(await destinationRows(database)).toEqual(expected);
  });

  it('exports to S3 as gzipped JSON lines under deterministic keys: a rewrite overwrites', async () => {
    const bucket = await newBucket();
    const { runId } = await exportWithRun(tenant.project.id, 'S3', s3Config(bucket));
    const objects = () => bucketContents(bucket);
    await executeRun(runId, executorDeps(1_000), false);
    const first = await objects();
    expect(first.keys).toHaveLength(3);
    expect(first.keys[0]).toMatch(/^events\/2024\/03\/01\/2024-03-01T10:00:00\+00:00-2024-03-01T11:00:00\+00:00-0-0\.jsonl\.gz$/);
    expect(first.uuids).toEqual(await windowUuids(tenant.project.id));

    await pool.query("UPDATE batch_export_runs SET cursor = NULL, parts_completed = 0, status = 'Starting' WHERE id = $1", [runId]);
    await executeRun(runId, executorDeps(1_000), false);
    expect(await objects()).toEqual(first);
  });

  it('retries a destination that is down, fails visibly on the last attempt, and a retry later completes the window', async () => {
    const receiver = await batchReceiver();
    receiver.failWith.status = 503;
    const { row, runId } = await exportWithRun(tenant.project.id, 'HTTP', { url: receiver.url, token: 'phc_test' });
    await expect(executeRun(runId, executorDeps(), false)).rejects.toThrow(/503/);
    expect(await runRow(runId)).toMatchObject({ status: 'FailedRetryable', latest_error: expect.stringContaining('503') });
    expect(await executeRun(runId, executorDeps(), true)).toBe('completed');
    expect(await runRow(runId)).toMatchObject({ status: 'Failed' });

    receiver.failWith.status = null;
    await store.retry(row.id, runId);
    await executeRun(runId, executorDeps(), false);
    expect(await runRow(runId)).toMatchObject({ status: 'Completed', records_completed: 2500 });
    expect([...new Set(receiver.uuids())].sort()).toEqual(await windowUuids(tenant.project.id));
    expect(receiver.bodies[0]).toMatchObject({ api_key: 'phc_test', historical_migration: true });
    await receiver.close();
  });

  it('exports persons changed in the window, one record per distinct id', async () => {
    const database = uniqueName('export_persons').toLowerCase().replace(/[^a-z0-9_]/g, '_');
    const destination = await destinationDatabase(database);
    const now = new Date();
    const person = '00000000-0000-4000-8000-0000000000aa';
    const stamp = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
    await clickhouse.insert('person', ['id', 'created_at', 'team_id', 'properties', 'is_identified', 'is_deleted', 'version'], [
      { id: person, created_at: stamp(now), team_id: tenant.project.id, properties: '{"plan":"pro"}', is_identified: 1, is_deleted: 0, version: 3 },
    ]);
    await clickhouse.insert('person_distinct_id', ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version'], [
      { team_id: tenant.project.id, distinct_id: 'p-a', person_id: person, is_deleted: 0, version: 1 },
      { team_id: tenant.project.id, distinct_id: 'p-b', person_id: person, is_deleted: 0, version: 2 },
    ]);
    // The rows above were stored (their _timestamp) within the minute before this window ends.
    const window = { start: new Date(now.getTime() - 3_600_000), end: new Date(now.getTime() + 60_000) };
    const { runId } = await exportWithRun(tenant.project.id, 'Postgres', { ...destination, table_name: 'persons' }, 'persons', window);
    expect(await executeRun(runId, executorDeps(), false)).toBe('completed');
    const client = new pg.Client({ connectionString: config.databaseUrl.replace(/\/[^/]+$/, `/${database}`) });
    await client.connect();
    const { rows } = await client.query('SELECT distinct_id, person_id::text AS person_id, properties FROM persons ORDER BY distinct_id');
    await client.end();
    expect(rows.map((r) => [r.distinct_id, r.person_id, r.properties.plan])).toEqual([['p-a', person, 'pro'], ['p-b', person, 'pro']]);
  });
});

describe('a backfill run', () => {
  it('ends its backfill when it is the last to finish, even as others finish at the same moment', async () => {
    const row = await store.create(tenant.project.id, { name: 'together', model: 'events', destination: { type: 'HTTP', config: { url: 'http://127.0.0.1:9/', token: 'phc_x' } }, interval: 'hour', paused: true, start_at: null, end_at: null }, new Date());
    for (let attempt = 0; attempt < 5; attempt++) {
      const backfill = await store.createBackfill(row, new Date('2023-01-01T00:00:00Z'), new Date('2023-01-01T04:00:00Z'));
      const runs = (await pool.query<{ id: string }>('SELECT id FROM batch_export_runs WHERE backfill_id = $1', [backfill.id])).rows;
      await pool.query("UPDATE batch_export_runs SET status = 'Running', locked_until = now() + interval '1 minute' WHERE backfill_id = $1", [backfill.id]);
      await Promise.all(runs.map((run) => store.finish(run.id, 'Completed', null)));
      expect(await store.backfill(row.id, backfill.id)).toMatchObject({ status: 'Completed', finished_runs: 4 });
    }
  });

  it('stops after the part it is writing when its backfill is cancelled, and stays Cancelled', async () => {
    const receiver = await batchReceiver();
    const row = await store.create(tenant.project.id, { name: 'cancelled', model: 'events', destination: { type: 'HTTP', config: { url: receiver.url, token: 'phc_x' } }, interval: 'hour', paused: true, start_at: null, end_at: null }, new Date());
    // The tenant's events happened at 09:00, whenever they were stored.
    const backfill = await store.createBackfill(row, new Date('2024-03-01T09:00:00Z'), new Date('2024-03-01T10:00:00Z'));
    const [run] = (await store.runs(row.id, 10, 0)).results;
    const deps = executorDeps(100, 30_000, 1);
    const cancelling: RunExecutorDeps['createDestination'] = (spec) => {
      const destination = deps.createDestination(spec);
      let first = true;
      return {
        takesEncodedEvents: destination.takesEncodedEvents,
        maxPartsInFlight: destination.maxPartsInFlight,
        write: async (part) => {
          const written = await destination.write(part);
          if (first) await store.cancelBackfill(row.id, backfill.id);
          first = false;
          return written;
        },
        close: () => destination.close(),
      };
    };
    try {
      expect(await executeRun(run!.id, { ...deps, createDestination: cancelling }, false)).toBe('cancelled');
      expect(await runRow(run!.id)).toMatchObject({ status: 'Cancelled', records_completed: 100, parts_completed: 1 });
      expect(receiver.uuids()).toHaveLength(100);
      expect(await store.backfill(row.id, backfill.id)).toMatchObject({ status: 'Cancelled', total_runs: 1, finished_runs: 0, records_completed: 100 });
    } finally {
      await receiver.close();
    }
  });
});

describe('a worker killed mid-run', () => {
  // Postgres writes one part at a time; S3 several at once, so a part after the last recorded one may be in the bucket already.
  it.each(['Postgres', 'S3'] as const)('leaves the run to be resumed where it stopped: %s ends with every event once', async (type) => {
    const many = await createTestTenant(pool, config);
    await storeWindowEvents(many.project.id, other.project.id, 20_000);
    const database = uniqueName('export_kill').toLowerCase().replace(/[^a-z0-9_]/g, '_');
    const bucket = type === 'S3' ? await newBucket() : '';
    const { runId } = await exportWithRun(many.project.id, type, type === 'S3' ? s3Config(bucket) : await destinationDatabase(database));
    const child = (): ChildProcess =>
      spawn(process.execPath, ['--import', 'tsx', 'services/worker/test/run-export-child.ts', runId], {
        cwd: repoRoot,
        env: { ...process.env, TRIBUTARY_ENV: 'test', LOG_LEVEL: 'silent', BATCH_EXPORT_PART_RECORDS: '200', BATCH_EXPORT_LEASE_MS: '1500' },
        stdio: 'ignore',
      });
    const first = child();
    await waitFor(async () => (await runRow(runId)).parts_completed >= 5, { timeoutMs: 60_000, intervalMs: 20, what: 'five parts written' });
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const killed = await runRow(runId);
    expect(killed.status).toBe('Running');
    expect(killed.parts_completed).toBeLessThan(100);

    // Once its lease has run out, another worker takes the run over from its cursor.
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const second = child();
    const exit = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(exit).toBe(0);
    expect(await runRow(runId)).toMatchObject({ status: 'Completed', records_completed: 20000, parts_completed: 100, attempts: 2 });
    const exported = type === 'S3' ? (await bucketContents(bucket)).uuids : await destinationRows(database);
    expect(exported).toEqual(await windowUuids(many.project.id));
  }, 120_000);
});

describe('the export schedule', () => {
  it('makes one run per due window however many workers look, and its queue runs them', async () => {
    const receiver = await batchReceiver();
    const now = new Date();
    const row = await store.create(tenant.project.id, { name: 'every 5', model: 'events', destination: { type: 'HTTP', config: { url: receiver.url, token: 'phc_x' } }, interval: 'every 5 minutes', paused: false, start_at: new Date(now.getTime() - 12 * 60_000), end_at: null }, now);
    await Promise.all([store.scheduleDue(now, 0, 100), store.scheduleDue(now, 0, 100), store.scheduleDue(now, 0, 100)]);
    const runs = (await store.runs(row.id, 100, 0)).results;
    const starts = runs.map((r) => r.data_interval_start.getTime());
    expect(new Set(starts).size).toBe(runs.length);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (const run of runs) expect(run.data_interval_end.getTime() - run.data_interval_start.getTime()).toBe(300_000);

    const connection = createRedis(config, { forQueues: true });
    const queue = await startExportQueue(executorDeps(), { connection, prefix: uniqueName('bull'), tickMs: 200, settleMs: 0, attempts: 2, backoffMs: 100, concurrency: 2 });
    try {
      await waitFor(async () => (await store.runs(row.id, 100, 0)).results.every((r) => r.status === 'Completed'), { timeoutMs: 30_000, what: 'every run completed' });
    } finally {
      await queue.close();
      connection.disconnect();
      await store.softDelete(tenant.project.id, row.id);
      await receiver.close();
    }
  });
});
