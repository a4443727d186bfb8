import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { cohortsToCalculate } from '@tributary/flags';
import { superviseQueue, type RunningQueue } from '../queue-lifecycle.js';
import { calculateCohort, type CohortCalculationDeps } from './calculate-cohort.js';
import type { CohortCalculationStore } from './cohort-calculation-store.js';

export const COHORT_CALCULATION_QUEUE = 'cohort-calculations';
const TICK = 'tick';
const CALCULATE = 'calculate';
/** Cohorts queued per look at most; those left wait for the next look, oldest first. */
const PER_TICK = 100;

export interface CohortCalculationQueueOptions {
  connection: ConnectionOptions;
  prefix?: string;
  /** How often the cohorts due are looked for (COHORT_CALCULATION_TICK_MS). */
  tickMs: number;
  /** COHORT_CALCULATION_INTERVAL_MIN, in milliseconds. */
  intervalMs: number;
  concurrency: number;
}

/** Queues a cohort's calculation under its own id: one already waiting or running is not queued twice. */
export async function enqueueCohortCalculation(queue: Pick<Queue, 'add'>, cohortId: number): Promise<void> {
  await queue.add(CALCULATE, { cohortId }, { jobId: `cohort-${cohortId}`, removeOnComplete: true, removeOnFail: true });
}

/**
 * Behavioural cohorts' calculations as BullMQ jobs: a repeating tick (one scheduler, however many
 * workers register it) queues the cohorts due (see cohortsToCalculate: new, edited, or older than
 * the interval), each under its cohort's id; workers calculate them `concurrency` at a time, and
 * BullMQ gives the job of a worker that died to another.
 */
export async function startCohortCalculationQueue(
  deps: CohortCalculationDeps & { store: Pick<CohortCalculationStore, 'candidates'> },
  options: CohortCalculationQueueOptions,
): Promise<RunningQueue> {
  const queueOptions = { connection: options.connection, ...(options.prefix ? { prefix: options.prefix } : {}) };
  const queue = new Queue(COHORT_CALCULATION_QUEUE, queueOptions);
  await queue.upsertJobScheduler('cohort-calculation-tick', { every: options.tickMs }, { name: TICK, opts: { removeOnComplete: true, removeOnFail: true } });

  const tick = async () => {
    const due = cohortsToCalculate(await deps.store.candidates(), { now: new Date(), intervalMs: options.intervalMs, limit: PER_TICK });
    for (const cohort of due) await enqueueCohortCalculation(queue, cohort.id);
  };

  const worker = new Worker(COHORT_CALCULATION_QUEUE, async (job: Job<{ cohortId?: number }>) => (job.name === TICK ? tick() : calculateCohort(deps, job.data.cohortId!)), {
    ...queueOptions,
    concurrency: options.concurrency,
  });
  worker.on('failed', (failed, error) => deps.logger.error({ err: error, job: failed?.id }, 'cohort calculation job failed'));
  return superviseQueue(queue, worker, deps.logger, 'cohort calculation');
}
