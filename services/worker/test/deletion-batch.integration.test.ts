import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jest } from '@jest/globals';
import { createClickHouse, sql, topologyOf } from '@tributary/clickhouse';
import { DELETION_JOB, MUTATION_REQUEST_TIMEOUT_MS, listDeletionRequests, nextDeletionRun, queueEventDeletion } from '@tributary/deletions';
import { createLogger } from '@tributary/logger';
import { createRedis } from '@tributary/redis';
import { createPool, createTestTenant, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { startDeletionScheduler, type DeletionScheduler } from '../src/deletion-scheduler.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const config = testConfig();
const pool = createPool(config, { max: 3 });
const clickhouse = createClickHouse(config, { requestTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS });
const logger = createLogger('worker-test', config.logLevel);
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
});

afterAll(async () => {
  await pool.end();
  await clickhouse.close();
});

interface Person {
  uuid: string;
  distinctIds: string[];
}

/** Writes `count` events per distinct id straight into ClickHouse, as ingest would. */
async function storeEvents(person: Person, count: number): Promise<void> {
  const now = new Date().toISOString().replace('T', ' ').slice(0, 19);
  const rows = person.distinctIds.flatMap((distinctId) =>
    Array.from({ length: count }, () => ({
      uuid: randomUUID(), event: 'seen', properties: '{}', timestamp: now, timestamp_ms: 0, team_id: tenant.project.id, distinct_id: distinctId,
      elements_chain: '', created_at: now, person_id: person.uuid, person_properties: '{}', person_created_at: now,
      group_0: '', group_1: '', group_2: '', group_3: '', group_4: '', inserted_at: now,
    })),
  );
  await clickhouse.insert('events', Object.keys(rows[0]!) as (keyof (typeof rows)[number])[], rows);
}

async function eventCounts(): Promise<Record<string, number>> {
  const rows = await clickhouse.query<{ distinct_id: string; n: string }>(
    sql`SELECT distinct_id, count() AS n FROM events WHERE team_id = ${tenant.project.id} GROUP BY distinct_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.distinct_id, Number(r.n)]));
}

const person = (name: string, ids = 1): Person => ({ uuid: randomUUID(), distinctIds: Array.from({ length: ids }, (_, i) => `${name}-${i}`) });

describe('weekly deletion batch', () => {
  let schedulers: DeletionScheduler[] = [];
  const prefix = uniqueName('bull');

  afterEach(async () => {
    await Promise.all(schedulers.map((s) => s.close()));
    schedulers = [];
  });

  it('registers one scheduler across replicas, next firing the coming Sunday 05:00 UTC', async () => {
    const connection = createRedis(config, { forQueues: true });
    try {
      for (let replica = 0; replica < 2; replica++) {
        schedulers.push(await startDeletionScheduler({ connection, prefix, pool, clickhouse, topology: topologyOf(config), logger }));
      }
      const registered = await schedulers[0]!.queue.getJobSchedulers();
      expect(registered).toHaveLength(1);
      const next = new Date(registered[0]!.next!);
      expect(next.getUTCDay()).toBe(0);
      expect([next.getUTCHours(), next.getUTCMinutes(), next.getUTCSeconds()]).toEqual([5, 0, 0]);
      expect(next.getTime() - Date.now()).toBeGreaterThan(0);
      expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);
      expect(next.toISOString()).toBe(nextDeletionRun(new Date()).toISOString());
    } finally {
      await Promise.all(schedulers.map((s) => s.close()));
      schedulers = [];
      connection.disconnect();
    }
  });

  it('logs a Redis error of its queue or worker as a warning (BullMQ reconnects)', async () => {
    const connection = createRedis(config, { forQueues: true });
    const warn = jest.spyOn(logger, 'warn');
    try {
      const scheduler = await startDeletionScheduler({ connection, prefix, pool, clickhouse, topology: topologyOf(config), logger });
      schedulers.push(scheduler);
      // A message of this test's own: real connection errors may be logged meanwhile.
      const message = `${prefix}: Connection is closed.`;
      expect(() => scheduler.worker.emit('error', new Error(message))).not.toThrow();
      expect(() => scheduler.queue.emit('error', new Error(message))).not.toThrow();
      const redisWarnings = warn.mock.calls.filter(([fields]) => (fields as { err?: Error } | undefined)?.err?.message === message);
      expect(redisWarnings).toHaveLength(2);
    } finally {
      warn.mockRestore();
      await Promise.all(schedulers.map((s) => s.close()));
      schedulers = [];
      connection.disconnect();
    }
  });

  it('`tributary deletions run-now` deletes exactly the queued persons\' events and marks their requests done', async () => {
    const doomed = person('doomed', 2);
    const alsoDoomed = person('also-doomed');
    const kept = person('kept', 2);
    for (const p of [doomed, alsoDoomed, kept]) await storeEvents(p, 3);
    const ids: number[] = [];
    for (const p of [doomed, alsoDoomed]) {
      ids.push(await queueEventDeletion(pool, { teamId: tenant.project.id, personUuid: p.uuid, distinctIds: p.distinctIds, requestedBy: tenant.user.id }));
    }

    const listed = await run('node', ['--import', 'tsx', 'packages/cli/src/main.ts', 'deletions', 'list', '--pending'], { cwd: repoRoot });
    for (const id of ids) expect(listed.stdout).toContain(`"id":${id},`);

    const { stdout } = await run('node', ['--import', 'tsx', 'packages/cli/src/main.ts', 'deletions', 'run-now'], { cwd: repoRoot, timeout: 120_000 });
    expect(stdout).toMatch(/deleted the events of \d+ queued request/);

    expect(await eventCounts()).toEqual({ 'kept-0': 3, 'kept-1': 3 });
    const done = (await listDeletionRequests(pool, 'done')).filter((r) => ids.includes(Number(r.id)));
    expect(done).toHaveLength(2);
    for (const r of done) expect(r.done_at).toBeInstanceOf(Date);
  });

  it('the scheduled job runs the same batch when it fires', async () => {
    const connection = createRedis(config, { forQueues: true });
    try {
      const scheduler = await startDeletionScheduler({ connection, prefix, pool, clickhouse, topology: topologyOf(config), logger });
      schedulers.push(scheduler);
      const victim = person('job-victim');
      await storeEvents(victim, 2);
      const id = await queueEventDeletion(pool, { teamId: tenant.project.id, personUuid: victim.uuid, distinctIds: victim.distinctIds, requestedBy: null });
      // What the scheduler enqueues on Sunday, enqueued now.
      await scheduler.queue.add(DELETION_JOB, {});
      await waitFor(async () => (await listDeletionRequests(pool, 'done')).some((r) => Number(r.id) === id), { what: 'the job to finish the request', timeoutMs: 60_000 });
      expect((await eventCounts())['job-victim-0']).toBeUndefined();
      // The test's queue lives under its own prefix; leave no scheduler behind in Redis.
      await scheduler.queue.obliterate({ force: true });
    } finally {
      await Promise.all(schedulers.map((s) => s.close()));
      schedulers = [];
      connection.disconnect();
    }
  });
});
