import { Sql, alteredTable, and, inList, sql, waitForEventMutations, type ClickHouse, type CompactQueryOptions, type Topology } from '@tributary/clickhouse';
import type { Logger } from '@tributary/logger';
import type { Pool, PoolClient } from '@tributary/postgres';

export interface DeletionRequest {
  id: number;
  team_id: number;
  person_uuid: string;
  distinct_ids: string[];
  created_at: Date;
  done_at: Date | null;
}

/**
 * How long a client that sends mutations waits for ClickHouse's answer: an ALTER may wait for the
 * reads running on its table before ClickHouse takes it, longer than an ordinary statement's timeout.
 */
export const MUTATION_REQUEST_TIMEOUT_MS = 120_000;

/** Arbitrary but fixed: only one worker in the whole deployment runs the batch at a time. */
const BATCH_LOCK_ID = 727_001;

export async function queueEventDeletion(db: Pool | PoolClient, request: { teamId: number; personUuid: string; distinctIds: string[]; requestedBy: number | null }): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    'INSERT INTO event_deletion_requests (team_id, person_uuid, distinct_ids, requested_by) VALUES ($1, $2, $3, $4) RETURNING id',
    [request.teamId, request.personUuid, request.distinctIds, request.requestedBy],
  );
  return rows[0]!.id;
}

export async function listDeletionRequests(pool: Pool, which: 'pending' | 'done' | 'all' = 'all'): Promise<DeletionRequest[]> {
  const where = { pending: 'WHERE done_at IS NULL', done: 'WHERE done_at IS NOT NULL', all: '' }[which];
  const { rows } = await pool.query<DeletionRequest>(`SELECT id, team_id, person_uuid, distinct_ids, created_at, done_at FROM event_deletion_requests ${where} ORDER BY id`);
  return rows;
}

/** One condition per request: the person's events by person id or by any of its distinct ids. */
export function deletionCondition(requests: readonly DeletionRequest[]): Sql {
  return Sql.trusted(
    requests
      .map((r) => and([sql`team_id = ${r.team_id}`, Sql.trusted(`(${sql`toString(person_id) = ${r.person_uuid}`.text} OR ${inList(sql`distinct_id`, r.distinct_ids).text})`)]).text)
      .map((text) => `(${text})`)
      .join(' OR '),
  );
}

/** What a job that deletes events needs; the clock, the mutation's timeout and the poll interval are for tests. */
export interface EventDeletionDeps {
  pool: Pool;
  clickhouse: ClickHouse;
  topology: Topology;
  logger: Logger;
  clock?: () => Date;
  mutationTimeoutMs?: number;
  pollMs?: number;
}

/** Runs `work` holding a Postgres advisory lock, so one worker in the deployment runs it at a time; null when another holds it. */
export async function whileLocked<T>(pool: Pool, lockId: number, work: (client: PoolClient) => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  try {
    const { rows: lock } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [lockId]);
    if (!lock[0]?.locked) return null;
    try {
      return await work(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [lockId]);
    }
  } finally {
    client.release();
  }
}

type MutationDeps = Pick<EventDeletionDeps, 'clickhouse' | 'topology' | 'mutationTimeoutMs' | 'pollMs'>;

/** Runs one mutation of events' rows (`DELETE WHERE ...`, `UPDATE ... WHERE ...`) and returns once ClickHouse finished it. */
export async function mutateEvents(
  deps: MutationDeps,
  mutation: Sql,
  defaultTimeoutMs: number,
  settings?: CompactQueryOptions['settings'],
): Promise<void> {
  // Mutations go to the table holding the rows: in a cluster, every shard's, not the Distributed one.
  // Named with its database: each server runs an ON CLUSTER statement in its own default database.
  const events = Sql.trusted(alteredTable(deps.topology, 'events'));
  await deps.clickhouse.command(sql`ALTER TABLE ${events} ${mutation}`, settings && { settings });
  await waitForEventMutations(deps.clickhouse, deps.topology, deps.mutationTimeoutMs ?? defaultTimeoutMs, deps.pollMs ?? 500);
}

/** Deletes the events matching `condition` with one mutation and returns once ClickHouse finished it. */
export function deleteEventsWhere(deps: MutationDeps, condition: Sql, defaultTimeoutMs: number): Promise<void> {
  return mutateEvents(deps, sql`DELETE WHERE ${condition}`, defaultTimeoutMs);
}

export interface DeletionBatchResult {
  requests: number;
  skipped: boolean;
}

/**
 * Deletes the events of every queued request with a single `ALTER TABLE ... DELETE` mutation,
 * waits until ClickHouse finished it, and only then marks the requests done. A crash before
 * that leaves them queued; running them again deletes nothing more than it should.
 */
export async function runDeletionBatch(deps: EventDeletionDeps): Promise<DeletionBatchResult> {
  const result = await whileLocked(deps.pool, BATCH_LOCK_ID, async (client) => {
    const { rows: pending } = await client.query<DeletionRequest>(
      'SELECT id, team_id, person_uuid, distinct_ids, created_at, done_at FROM event_deletion_requests WHERE done_at IS NULL ORDER BY id',
    );
    if (pending.length === 0) return { requests: 0, skipped: false };
    await deleteEventsWhere(deps, deletionCondition(pending), 30 * 60_000);
    const doneAt = (deps.clock ?? (() => new Date()))();
    await client.query('UPDATE event_deletion_requests SET done_at = $2 WHERE id = ANY($1::bigint[])', [pending.map((r) => r.id), doneAt]);
    deps.logger.info({ requests: pending.length }, 'event deletion batch finished');
    return { requests: pending.length, skipped: false };
  });
  if (result === null) deps.logger.info('another worker is running the deletion batch');
  return result ?? { requests: 0, skipped: true };
}
