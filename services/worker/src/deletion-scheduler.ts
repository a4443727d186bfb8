import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { ClickHouse, Topology } from '@tributary/clickhouse';
import { DELETION_JOB, DELETION_QUEUE, DELETION_SCHEDULE, runDeletionBatch } from '@tributary/deletions';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import { superviseQueue, type RunningQueue } from './queue-lifecycle.js';

export type DeletionScheduler = RunningQueue;

/**
 * Registers the weekly job scheduler (an upsert keyed by id, so every replica and restart
 * registers the same one) and the worker that runs the batch when it fires.
 */
export async function startDeletionScheduler(deps: {
  connection: ConnectionOptions;
  prefix?: string;
  pool: Pool;
  clickhouse: ClickHouse;
  topology: Topology;
  logger: Logger;
}): Promise<DeletionScheduler> {
  const options = { connection: deps.connection, ...(deps.prefix ? { prefix: deps.prefix } : {}) };
  const queue = new Queue(DELETION_QUEUE, options);
  await queue.upsertJobScheduler(DELETION_SCHEDULE.id, { pattern: DELETION_SCHEDULE.pattern, tz: DELETION_SCHEDULE.tz }, { name: DELETION_JOB });
  const worker = new Worker(
    DELETION_QUEUE,
    async () => runDeletionBatch({ pool: deps.pool, clickhouse: deps.clickhouse, topology: deps.topology, logger: deps.logger }),
    { ...options, concurrency: 1 },
  );
  worker.on('failed', (job, error) => deps.logger.error({ err: error, job: job?.id }, 'deletion batch failed; its requests stay queued'));
  return superviseQueue(queue, worker, deps.logger, 'deletion');
}
