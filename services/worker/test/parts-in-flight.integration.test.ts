import { setTimeout as sleep } from 'node:timers/promises';
import { ExportError, type Destination, type ExportPart, type RunCursor } from '@tributary/batch-exports';
import { createTestTenant, waitFor } from '@tributary/test-support';
import { executeRun } from '../src/batch-exports/run-executor.js';
import { clickhouse, config, executorDeps, exportWithRun, pool, runRow, store, storeWindowEvents } from './export-fixture.js';

afterAll(async () => {
  await pool.end();
  await clickhouse.close();
});

/**
 * A destination whose parts take 20 ms each, failing those `fails` names; part 0 is held until
 * part `part0Awaits` has been written (failing after 10 s), so parts in flight show without
 * relying on how fast a loaded machine reads. It tells which parts it wrote, in the order they
 * finished.
 */
function slowDestination({ part0Awaits, fails = () => false }: { part0Awaits?: number; fails?: (index: number) => boolean } = {}) {
  const finished: number[] = [];
  const destination: Destination = {
    async write(part: ExportPart) {
      if (part.index === 0 && part0Awaits !== undefined) {
        await waitFor(async () => finished.includes(part0Awaits), { timeoutMs: 10_000, intervalMs: 10, what: `part ${part0Awaits} written while part 0 is` });
      } else {
        await sleep(20);
      }
      if (fails(part.index)) throw new ExportError('test destination', `part ${part.index} refused`);
      finished.push(part.index);
      return { records: part.records.length, bytes: 1 };
    },
    close: async () => undefined,
  };
  return { destination, finished };
}

/** The executor's store, telling the cursors parts are recorded with, in order. */
function recordingStore() {
  const cursors: RunCursor[] = [];
  const spied = Object.create(store) as typeof store;
  spied.partWritten = async (runId, part, leaseMs) => {
    cursors.push(part.cursor);
    return store.partWritten(runId, part, leaseMs);
  };
  return { spied, cursors };
}

const inOrder = (cursors: RunCursor[]) => cursors.every((c, i) => i === 0 || `${cursors[i - 1]!.inserted_at} ${cursors[i - 1]!.key}` < `${c.inserted_at} ${c.key}`);

describe('parts in flight', () => {
  it('writes several parts at once and records them in order, each after every part before it', async () => {
    const tenant = await createTestTenant(pool, config);
    const other = await createTestTenant(pool, config);
    await storeWindowEvents(tenant.project.id, other.project.id, 2_500);
    const { runId } = await exportWithRun(tenant.project.id, 'HTTP', { url: 'http://127.0.0.1:9/', token: 'phc_unused' });
    const { destination, finished } = slowDestination({ part0Awaits: 2 });
    const { spied, cursors } = recordingStore();
    expect(await executeRun(runId, { ...executorDeps(500, 30_000, 3), store: spied, createDestination: () => destination }, false)).toBe('completed');
    // Part 0 was still being written when parts 1 and 2 were done.
    expect(finished.indexOf(0)).toBeGreaterThan(finished.indexOf(2));
    expect(cursors).toHaveLength(5);
    expect(inOrder(cursors)).toBe(true);
    expect(await runRow(runId)).toMatchObject({ status: 'Completed', parts_completed: 5, records_completed: 2_500 });
  });

  it('records no part after one that failed, and the next attempt resumes after the last recorded one', async () => {
    const tenant = await createTestTenant(pool, config);
    const other = await createTestTenant(pool, config);
    await storeWindowEvents(tenant.project.id, other.project.id, 2_500);
    const { runId } = await exportWithRun(tenant.project.id, 'HTTP', { url: 'http://127.0.0.1:9/', token: 'phc_unused' });
    const failing = slowDestination({ part0Awaits: 2, fails: (index) => index === 1 });
    const { spied, cursors } = recordingStore();
    await expect(executeRun(runId, { ...executorDeps(500, 30_000, 3), store: spied, createDestination: () => failing.destination }, false)).rejects.toThrow('part 1 refused');
    // Part 2 was written while part 0 was, but part 1 failed: only part 0 counts as done.
    expect(failing.finished).toEqual(expect.arrayContaining([0, 2]));
    expect(cursors).toHaveLength(1);
    expect(await runRow(runId)).toMatchObject({ status: 'FailedRetryable', parts_completed: 1, records_completed: 500 });

    const again = slowDestination();
    expect(await executeRun(runId, { ...executorDeps(500, 30_000, 3), store: spied, createDestination: () => again.destination }, false)).toBe('completed');
    expect(again.finished.sort()).toEqual([1, 2, 3, 4]);
    expect(inOrder(cursors)).toBe(true);
    expect(await runRow(runId)).toMatchObject({ status: 'Completed', parts_completed: 5, records_completed: 2_500 });
  });
});
