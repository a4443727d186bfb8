import { randomUUID } from 'node:crypto';
import type { ChunkPerson } from '@tributary/ingestion';
import { createPool, withTransaction } from '@tributary/postgres';
import { createTestTenant, testConfig } from '@tributary/test-support';
import { ConcurrentClaimError, IngestPersonStore } from '../src/persons/ingest-person-store.js';
import { classifyFailure } from '../src/failure-policy.js';

/**
 * Two partitions that both meet a new distinct id create a person with the same uuid (it derives
 * from the id). The chaos suite found the second insert failing with a unique violation, which
 * counted as the event's own fault: the chunk was split and could have been dead-lettered. It is
 * a conflict with a concurrent transaction, retried like a concurrently claimed distinct id.
 */
const config = testConfig();
const pool = createPool(config, { max: 4 });

afterAll(() => pool.end());

function newPerson(uuid: string): ChunkPerson {
  return { id: -1, uuid, properties: {}, isIdentified: false, createdAt: new Date(), version: 0, created: true, changed: true, deleted: false, mergedInto: null };
}

test('a person created concurrently by another transaction is a conflict to retry, not a failure of the event', async () => {
  const { project } = await createTestTenant(pool, config);
  const uuid = randomUUID();
  let releaseFirst!: () => void;
  const firstInserted = new Promise<void>((resolve) => (releaseFirst = resolve));
  let commitFirst!: () => void;
  const firstMayCommit = new Promise<void>((resolve) => (commitFirst = resolve));

  const first = withTransaction(pool, async (client) => {
    await new IngestPersonStore(client).insertPersons(project.id, [newPerson(uuid)]);
    releaseFirst();
    await firstMayCommit;
  });
  await firstInserted;
  // The second insert waits on the first transaction's uncommitted row, then finds it taken.
  const second = withTransaction(pool, (client) => new IngestPersonStore(client).insertPersons(project.id, [newPerson(uuid)]));
  await new Promise((resolve) => setTimeout(resolve, 200));
  commitFirst();
  await first;

  const failure = await second.then(() => null, (error: unknown) => error);
  expect(failure).toBeInstanceOf(ConcurrentClaimError);
  expect(classifyFailure(failure)).toBe('conflict');
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM persons WHERE uuid = $1', [uuid]);
  expect(rows[0].n).toBe(1);
});
