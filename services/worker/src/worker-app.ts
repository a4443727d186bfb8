import type { Config } from '@tributary/config';
import type { Logger } from '@tributary/logger';
import { createRedis, redisAnswers } from '@tributary/redis';
import { createPool, postgresAnswers } from '@tributary/postgres';
import { createClickHouse, topologyOf } from '@tributary/clickhouse';
import { createMetrics, stopInOrder, type ServiceRuntimeOptions, type StopStep } from '@tributary/http';
import { BatchExportStore, DestinationGuard, createDestination, destinationPolicy } from '@tributary/batch-exports';
import { MUTATION_REQUEST_TIMEOUT_MS } from '@tributary/deletions';
import { startExportQueue } from './batch-exports/export-queue.js';
import { exportMetrics } from './batch-exports/export-metrics.js';
import { startDeletionScheduler, startRetentionScheduler, startSquashScheduler } from './deletion-scheduler.js';
import { startCohortCalculationQueue } from './cohort-calculation/cohort-calculation-queue.js';
import { CohortCalculationStore } from './cohort-calculation/cohort-calculation-store.js';
import { cohortMembersReader } from './cohort-calculation/cohort-members-reader.js';
import { cohortStatement } from './cohort-calculation/cohort-statement.js';
import { queueMetrics } from './worker-metrics.js';

export interface WorkerBuildDeps {
  config: Config;
  logger: Logger;
}

/** Person ids one insert of a cohort's calculated members takes. */
const COHORT_INSERT_BATCH = 5_000;

/** The worker service, connected and its queues started: what `main.ts` runs. */
export async function buildWorker({ config, logger }: WorkerBuildDeps): Promise<{ options: ServiceRuntimeOptions }> {
  const redis = createRedis(config);
  const pool = createPool(config, { max: 3 });
  const clickhouse = createClickHouse(config, { requestTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS });
  // An export streams a whole window in one response, for as long as its destination takes.
  const exportClickhouse = createClickHouse(config, { requestTimeoutMs: 6 * 3_600_000 });
  // A cohort's members stream for as long as ClickHouse lets its query run.
  const cohortClickhouse = createClickHouse(config, { requestTimeoutMs: (config.cohortCalculationMaxExecutionTimeS + 10) * 1000 });
  const connection = createRedis(config, { forQueues: true });
  const schedulerDeps = { connection, pool, clickhouse, topology: topologyOf(config), logger, prefix: config.queuePrefix };
  const scheduler = await startDeletionScheduler(schedulerDeps);
  const retention = await startRetentionScheduler(schedulerDeps);
  const squash = await startSquashScheduler(schedulerDeps);
  const metrics = createMetrics('worker');
  const destinationGuard = new DestinationGuard(destinationPolicy(config));
  const exports = await startExportQueue(
    {
      store: new BatchExportStore(pool),
      clickhouse: exportClickhouse,
      createDestination: (spec) => createDestination(spec, destinationGuard),
      logger,
      partRecords: config.batchExportPartRecords,
      partsInFlight: config.batchExportPartsInFlight,
      leaseMs: config.batchExportLeaseMs,
      observe: exportMetrics(metrics),
    },
    {
      connection,
      prefix: config.queuePrefix,
      tickMs: config.batchExportTickMs,
      settleMs: config.batchExportSettleS * 1000,
      attempts: config.batchExportAttempts,
      backoffMs: config.batchExportBackoffMs,
      concurrency: config.batchExportConcurrency,
    },
  );
  const cohortStore = new CohortCalculationStore(pool);
  const cohorts = await startCohortCalculationQueue(
    {
      store: cohortStore,
      members: cohortMembersReader({ clickhouse: cohortClickhouse, statement: cohortStatement(cohortStore), limits: config }),
      logger,
      batchSize: COHORT_INSERT_BATCH,
    },
    {
      connection,
      prefix: config.queuePrefix,
      tickMs: config.cohortCalculationTickMs,
      intervalMs: config.cohortCalculationIntervalMin * 60_000,
      concurrency: config.cohortCalculationConcurrency,
    },
  );
  // Every queue is measured, must be running for the worker to be healthy, and is stopped first, in this order.
  const queues = [
    ['deletion scheduler', scheduler],
    ['retention scheduler', retention],
    ['override squash scheduler', squash],
    ['export queue', exports],
    ['cohort calculation queue', cohorts],
  ] as const;
  queueMetrics(metrics, { queues: queues.map(([, queue]) => queue), logger });

  const options: ServiceRuntimeOptions = {
    name: 'worker',
    logger,
    metrics,
    host: config.host,
    port: config.workerPort,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    // The queues live in Redis; Postgres and ClickHouse are needed only while a job runs.
    dependencies: {
      redis: {
        check: async () => (await redisAnswers(redis)) && queues.every(([, running]) => running.worker.isRunning()),
        required: true,
      },
      postgres: { check: () => postgresAnswers(pool), required: false },
      clickhouse: { check: () => clickhouse.ping(), required: false },
    },
    stop: stopInOrder(logger, [
      ...queues.map(([what, queue]): StopStep => [what, () => queue.close()]),
      ['redis queue connection', () => connection.disconnect()],
      ['postgres', () => pool.end()],
      ['clickhouse', () => clickhouse.close()],
      ['export clickhouse', () => exportClickhouse.close()],
      ['cohort clickhouse', () => cohortClickhouse.close()],
      ['redis', () => redis.disconnect()],
    ]),
  };
  return { options };
}
