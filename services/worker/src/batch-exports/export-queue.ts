import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from '@tributary/logger';
import { superviseQueue, type RunningQueue } from '../queue-lifecycle.js';
import { executeRun, type RunExecutorDeps } from './run-executor.js';

export const BATCH_EXPORT_QUEUE = 'batch-exports';
const TICK = 'tick';
const RUN = 'run';

export interface ExportQueueOptions {
  connection: ConnectionOptions;
  prefix?: string;
  /** How often the schedule is looked at: due windows become runs, waiting runs become jobs. */
  tickMs: number;
  /** How long after a window ends its run starts, for the last inserts of it to be visible. */
  settleMs: number;
  /** Attempts of a run before it is Failed, the first `backoffMs` apart, doubling. */
  attempts: number;
  backoffMs: number;
  concurrency: number;
}

/**
 * The batch-export runs as BullMQ jobs: a repeating tick makes the runs of due windows (in
 * Postgres, one per window) and queues every run waiting for a worker under its own id, so a run
 * is queued once however many workers tick; BullMQ retries a failed run with backoff, and takes
 * back the job of a worker that died.
 */
export async function startExportQueue(deps: RunExecutorDeps & { logger: Logger }, options: ExportQueueOptions): Promise<RunningQueue> {
  const queueOptions = { connection: options.connection, ...(options.prefix ? { prefix: options.prefix } : {}) };
  const queue = new Queue(BATCH_EXPORT_QUEUE, queueOptions);
  await queue.upsertJobScheduler('batch-export-tick', { every: options.tickMs }, { name: TICK, opts: { removeOnComplete: true, removeOnFail: true } });

  const tick = async () => {
    await deps.store.scheduleDue(new Date(), options.settleMs, 500);
    const waiting = await deps.store.claimableRuns(200);
    if (waiting.length === 0) return;
    await queue.addBulk(
      waiting.map((runId) => ({
        name: RUN,
        data: { runId },
        opts: { jobId: runId, attempts: options.attempts, backoff: { type: 'exponential', delay: options.backoffMs }, removeOnComplete: true, removeOnFail: true },
      })),
    );
  };

  const worker = new Worker(
    BATCH_EXPORT_QUEUE,
    async (job: Job<{ runId?: string }>) => {
      if (job.name === TICK) return tick();
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      return executeRun(job.data.runId!, deps, lastAttempt);
    },
    { ...queueOptions, concurrency: options.concurrency },
  );
  return superviseQueue(queue, worker, deps.logger, 'batch export');
}
