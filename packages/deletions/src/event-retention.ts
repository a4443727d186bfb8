import { Sql, sql } from '@tributary/clickhouse';
import { deleteEventsWhere, whileLocked, type EventDeletionDeps } from './deletion-batch.js';

/** A project that keeps its events for a number of days. */
export interface RetainedProject {
  id: number;
  event_retention_days: number;
}

/** Arbitrary but fixed, apart from the deletion batch's: one worker in the deployment runs the job at a time. */
const RETENTION_LOCK_ID = 727_002;
const DAY_MS = 86_400_000;

/**
 * The first moment a project keeps: the start of the UTC day `days` days before `now`'s, so a run
 * at any hour of a day deletes the same whole days.
 */
export function retentionCutoff(now: Date, days: number): Date {
  return new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - days * DAY_MS);
}

/** Each project's events older than its cutoff, and no other project's. */
export function retentionCondition(projects: readonly RetainedProject[], now: Date): Sql {
  return Sql.trusted(projects.map((p) => `(${sql`team_id = ${p.id} AND timestamp < ${retentionCutoff(now, p.event_retention_days)}`.text})`).join(' OR '));
}

export interface RetentionResult {
  /** Projects with a retention set. */
  projects: number;
  /** Events older than their project keeps, deleted by this run. */
  events: number;
  skipped: boolean;
}

/**
 * Deletes the events each project keeps no longer (its `event_retention_days`) with one
 * `ALTER TABLE ... DELETE` mutation, and waits until ClickHouse finished it. Events are partitioned
 * by month for every project together, so a project's old days cannot be dropped as partitions. A
 * mutation rewrites the parts it touches, so none is made when no event is old enough.
 */
export async function runEventRetention(deps: EventDeletionDeps): Promise<RetentionResult> {
  const result = await whileLocked(deps.pool, RETENTION_LOCK_ID, async (client) => {
    const { rows: projects } = await client.query<RetainedProject>('SELECT id, event_retention_days FROM projects WHERE event_retention_days IS NOT NULL ORDER BY id');
    if (projects.length === 0) return { projects: 0, events: 0, skipped: false };
    const condition = retentionCondition(projects, (deps.clock ?? (() => new Date()))());
    const [counted] = await deps.clickhouse.query<{ n: string | number }>(sql`SELECT count() AS n FROM events WHERE ${condition}`);
    const events = Number(counted?.n ?? 0);
    if (events > 0) await deleteEventsWhere(deps, condition, 60 * 60_000);
    deps.logger.info({ projects: projects.length, events }, 'event retention job finished');
    return { projects: projects.length, events, skipped: false };
  });
  if (result === null) deps.logger.info('another worker is running the event retention job');
  return result ?? { projects: 0, events: 0, skipped: true };
}
