import cluster from 'node:cluster';
import type { Logger } from '@tributary/logger';

/**
 * Runs a service as `workers` processes sharing its port (node:cluster), because one Node process
 * uses one core and capture and decide are CPU-bound. Call it at the top of main.ts, before any
 * store is opened. In a worker, or with one worker, it resolves at once and main.ts goes on. In
 * the primary it forks the workers and never resolves, so the primary opens no store and serves
 * nothing: it forwards SIGTERM and SIGINT to the workers as SIGTERM (each drains as a single
 * process would) and exits once they all have, so pid files and `kill` work as before.
 *
 * A worker that dies before it listens is a start-up failure: the primary stops the others and
 * exits 1, as a single process would have. One that dies later is replaced.
 */
export function runAsWorkers(name: string, workers: number, logger: Logger): Promise<void> {
  if (workers <= 1 || !cluster.isPrimary) return Promise.resolve();
  let stopping = false;
  let failed = false;
  const listening = new Set<number>();
  const stopAll = () => {
    // Once: a second SIGTERM would find the workers' handlers spent and kill them mid-drain.
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };

  cluster.on('listening', (worker) => listening.add(worker.id));
  cluster.on('exit', (worker, code, signal) => {
    const started = listening.delete(worker.id);
    if (!stopping && started) {
      logger.error({ pid: worker.process.pid, code, signal }, `${name} worker died; starting another`);
      cluster.fork();
      return;
    }
    if (!stopping) {
      logger.error({ pid: worker.process.pid, code, signal }, `${name} worker failed to start; stopping`);
      failed = true;
      stopAll();
    }
    if (code !== 0 && !(stopping && signal === 'SIGTERM')) failed = true;
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, stopAll);

  for (let i = 0; i < workers; i++) cluster.fork();
  logger.info({ workers }, `${name} primary started its workers`);
  return new Promise<void>(() => undefined);
}
