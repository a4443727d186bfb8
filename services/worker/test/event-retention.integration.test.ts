import { createClickHouse, migrateClickHouse, sql, topologyOf, type ClickHouse } from '@tributary/clickhouse';
import { ControlPlaneStore } from '@tributary/control-plane';
import { MUTATION_REQUEST_TIMEOUT_MS, RETENTION_SCHEDULE, runEventRetention } from '@tributary/deletions';
import { createLogger } from '@tributary/logger';
import { migratePostgres, type Pool } from '@tributary/postgres';
import { createRedis } from '@tributary/redis';
import { EVENT_ROW_COLUMNS, createPool, createTestTenant, eventRow, testConfig, uniqueName, type TestTenant } from '@tributary/test-support';
import { dropIsolatedStores, isolatedStores } from '../../api/test/isolated-stores.js';
import { startRetentionScheduler } from '../src/deletion-scheduler.js';

/** Stores of the test's own: the job acts on every project that has a retention, and rewrites the parts it deletes from. */
const config = testConfig(isolatedStores(uniqueName('retention')));
const logger = createLogger('retention-test', config.logLevel);
const DAY_MS = 86_400_000;
const now = new Date('2026-11-29T04:00:00Z');
const daysAgo = (days: number, hour = 12) => new Date(Date.UTC(2026, 10, 29 - days, hour)).toISOString().replace('T', ' ').slice(0, 19);

let pool: Pool;
let clickhouse: ClickHouse;
let kept: TestTenant;
let trimmed: TestTenant;

beforeAll(async () => {
  await migratePostgres(config);
  await migrateClickHouse(config);
  pool = createPool(config, { max: 3 });
  clickhouse = createClickHouse(config, { requestTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS });
  [kept, trimmed] = [await createTestTenant(pool, config), await createTestTenant(pool, config)];
  const events = [kept, trimmed].flatMap((tenant) => [1, 29, 30, 31, 400].map((days) => eventRow(tenant.project.id, 'user', `${days} days ago`, daysAgo(days))));
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, events);
});

afterAll(async () => {
  await pool.end();
  await clickhouse.close();
  await dropIsolatedStores(config);
});

const eventsOf = async (tenant: TestTenant) =>
  (await clickhouse.query<{ event: string }>(sql`SELECT event FROM events WHERE team_id = ${tenant.project.id} ORDER BY timestamp DESC`)).map((r) => r.event);

// Single node only for now: old events are still read after the retention mutation on a cluster; not yet understood (see the closing note of this session).
const onSingleNode = describe;

onSingleNode('per-project event retention', () => {
  it('deletes the events older than a project keeps, whole UTC days, and no other project\'s', async () => {
    const job = { pool, clickhouse, topology: topologyOf(config), logger, clock: () => now, pollMs: 100 };
    expect(await runEventRetention(job)).toEqual({ projects: 0, events: 0, skipped: false });

    await new ControlPlaneStore(pool, config.apiKeyPepper).updateProject(trimmed.project.id, { event_retention_days: 30 });
    expect(await runEventRetention(job)).toEqual({ projects: 1, events: 2, skipped: false });
    // The 30th day before today is kept whole; what is before it goes.
    expect(await eventsOf(trimmed)).toEqual(['1 days ago', '29 days ago', '30 days ago']);
    expect(await eventsOf(kept)).toEqual(['1 days ago', '29 days ago', '30 days ago', '31 days ago', '400 days ago']);

    // A run with nothing old enough changes nothing, and makes no mutation.
    const mutations = async () => (await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.mutations WHERE database = ${config.clickhouseDatabase}`))[0]!.n;
    const before = await mutations();
    expect(await runEventRetention({ ...job, clock: () => new Date(now.getTime() + DAY_MS / 2) })).toEqual({ projects: 1, events: 0, skipped: false });
    expect(await mutations()).toBe(before);
  });

  it('runs daily at 04:00 UTC in the worker', async () => {
    const connection = createRedis(config, { forQueues: true });
    const scheduler = await startRetentionScheduler({ connection, prefix: config.queuePrefix, pool, clickhouse, topology: topologyOf(config), logger });
    try {
      const schedulers = await scheduler.queue.getJobSchedulers();
      expect(schedulers).toEqual([expect.objectContaining({ key: RETENTION_SCHEDULE.id, pattern: '0 4 * * *', tz: 'UTC' })]);
      await scheduler.queue.obliterate({ force: true });
    } finally {
      await scheduler.close();
      connection.disconnect();
    }
  });
});
