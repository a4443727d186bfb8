import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { ClickHouse, Topology } from '@tributary/clickhouse';
import {
  DELETION_JOB,
  DELETION_QUEUE,
  DELETION_SCHEDULE,
  RETENTION_JOB,
  RETENTION_QUEUE,
  RETENTION_SCHEDULE,
  SQUASH_JOB,
  SQUASH_QUEUE,
  SQUASH_SCHEDULE,
  runDeletionBatch,
  runEventRetention,
  runOverrideSquash,
} from '@tributary/deletions';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import { superviseQueue, type RunningQueue } from './queue-lifecycle.js';

export type DeletionScheduler = RunningQueue;

export interface DeletionSchedulerDeps {
  connection: ConnectionOptions;
  prefix?: string;
  pool: Pool;
  clickhouse: ClickHouse;
  topology: Topology;
  logger: Logger;
}

/**
 * Registers a job scheduler (an upsert keyed by id, so every replica and restart registers the
 * same one) and the worker that runs the job when it fires, one at a time.
 */
async function startScheduledDeletion(
  deps: DeletionSchedulerDeps,
  job: { queue: string; name: string; schedule: { id: string; pattern: string; tz: string }; failed: string },
  run: () => Promise<unknown>,
): Promise<DeletionScheduler> {
  const options = { connection: deps.connection, ...(deps.prefix ? { prefix: deps.prefix } : {}) };
  const queue = new Queue(job.queue, options);
  await queue.upsertJobScheduler(job.schedule.id, { pattern: job.schedule.pattern, tz: job.schedule.tz }, { name: job.name });
  const worker = new Worker(job.queue, run, { ...options, concurrency: 1 });
  worker.on('failed', (failed, error) => deps.logger.error({ err: error, job: failed?.id }, job.failed));
  return superviseQueue(queue, worker, deps.logger, job.name);
}

/** The weekly batch that deletes deleted persons' events. */
export function startDeletionScheduler(deps: DeletionSchedulerDeps): Promise<DeletionScheduler> {
  return startScheduledDeletion(
    deps,
    { queue: DELETION_QUEUE, name: DELETION_JOB, schedule: DELETION_SCHEDULE, failed: 'deletion batch failed; its requests stay queued' },
    () => runDeletionBatch(deps),
  );
}

/** The daily job that deletes the events projects keep no longer (their event_retention_days). */
export function startRetentionScheduler(deps: DeletionSchedulerDeps): Promise<DeletionScheduler> {
  return startScheduledDeletion(
    deps,
    { queue: RETENTION_QUEUE, name: RETENTION_JOB, schedule: RETENTION_SCHEDULE, failed: 'event retention job failed; the next run deletes what it did not' },
    () => runEventRetention(deps),
  );
}

/** The daily job that rewrites moved distinct ids' events to their current person (persons on events' override squash). */
export function startSquashScheduler(deps: DeletionSchedulerDeps): Promise<DeletionScheduler> {
  return startScheduledDeletion(
    deps,
    { queue: SQUASH_QUEUE, name: SQUASH_JOB, schedule: SQUASH_SCHEDULE, failed: 'override squash failed; the next run squashes what it did not' },
    () => runOverrideSquash(deps),
  );
}
