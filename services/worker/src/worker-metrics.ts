import type { Queue, Worker } from 'bullmq';
import { Counter, Gauge, Histogram, type Registry } from '@tributary/http';
import type { Logger } from '@tributary/logger';

const STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

/**
 * Each queue's jobs by state (asked of Redis when scraped) and its worker's job outcomes and
 * durations, counted as they happen.
 */
export function queueMetrics(registry: Registry, { queues, logger }: { queues: { queue: Queue; worker: Worker }[]; logger: Logger }): void {
  new Gauge({
    name: 'tributary_worker_queue_jobs',
    help: 'Jobs in a BullMQ queue, by state.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      for (const { queue } of queues) {
        try {
          const counts = await queue.getJobCounts(...STATES);
          for (const state of STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
        } catch (error) {
          logger.warn({ err: error, queue: queue.name }, 'queue depth unavailable');
        }
      }
    },
  });
  const outcomes = new Counter({ name: 'tributary_worker_jobs_total', help: 'Jobs this worker finished, by queue and outcome.', labelNames: ['queue', 'outcome'] as const, registers: [registry] });
  const duration = new Histogram({
    name: 'tributary_worker_job_duration_seconds',
    help: 'Time a job ran, by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  });
  for (const { queue, worker } of queues) {
    const finished = (outcome: 'completed' | 'failed', job: { processedOn?: number | undefined; finishedOn?: number | undefined } | undefined) => {
      const labels = { queue: queue.name, outcome };
      outcomes.inc(labels);
      if (job?.processedOn && job.finishedOn) duration.observe(labels, (job.finishedOn - job.processedOn) / 1000);
    };
    worker.on('completed', (job) => finished('completed', job));
    worker.on('failed', (job) => finished('failed', job));
  }
}
