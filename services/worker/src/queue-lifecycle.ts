import type { Queue, Worker } from 'bullmq';
import type { Logger } from '@tributary/logger';

export interface RunningQueue {
  queue: Queue;
  worker: Worker;
  close: () => Promise<void>;
}

/**
 * A queue and its worker, logged and started as every one of the worker service's is. BullMQ
 * reports a lost Redis connection (it reconnects by itself) as an 'error' event; with no listener
 * it prints the error raw with console.error, outside the one logger, and one such error surfaced
 * in a test run as unhandled. The worker is returned once connected: one closed while its
 * blocking connection was still connecting had that connection's failed start reported after
 * the listeners were gone, as an unhandled 'error'.
 */
export async function superviseQueue(queue: Queue, worker: Worker, logger: Logger, name: string): Promise<RunningQueue> {
  worker.on('error', (error) => logger.warn({ err: error }, `${name} worker: Redis error; BullMQ reconnects`));
  queue.on('error', (error) => logger.warn({ err: error }, `${name} queue: Redis error; BullMQ reconnects`));
  await worker.waitUntilReady();
  return {
    queue,
    worker,
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
