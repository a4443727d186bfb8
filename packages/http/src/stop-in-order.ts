import type { Logger } from '@tributary/logger';

/** One step of a service's shutdown: close a connection, flush a producer, stop a consumer. */
export type StopStep = readonly [what: string, stop: () => unknown];

/**
 * A service's `stop`: each step awaited before the next, so whatever writes (consumers,
 * producers, queues) is done before the stores it writes to are closed. A step that fails is
 * logged and the rest still run, so one broken connection leaves no other open; the first failure
 * is thrown once every step ran, for the runtime to report.
 */
export function stopInOrder(logger: Logger, steps: readonly StopStep[]): () => Promise<void> {
  return async () => {
    let failure: { error: unknown } | null = null;
    for (const [what, stop] of steps) {
      try {
        await stop();
      } catch (error) {
        logger.error({ err: error }, `shutdown: ${what} failed`);
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  };
}
