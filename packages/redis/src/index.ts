import { Redis } from 'ioredis';
import type { Config } from '@tributary/config';

export type { Redis };
export { TrackedCopies, type TrackedCopiesOptions, type TrackedRead } from './tracked-copies.js';
export { PropertyReadCounter, PROPERTY_READS_KEY, propertyReadCounts, type PropertyReadCount, type PropertyReadCounterOptions } from './property-reads.js';

/**
 * Redis holds caches and coordination only, so cache commands fail fast instead of queueing
 * while it is away: callers fall back to Postgres or answer without the cache. Queue
 * connections (`forQueues`) are the exception: BullMQ needs commands that wait and blocking
 * reads without a timeout.
 */
export function createRedis(config: Pick<Config, 'redisUrl'>, options: { commandTimeoutMs?: number; forQueues?: boolean } = {}): Redis {
  if (options.forQueues) return new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  return new Redis(config.redisUrl, {
    enableOfflineQueue: true,
    maxRetriesPerRequest: 2,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    connectTimeout: 2_000,
  });
}

/** Whether Redis answers a PING, for `/_ready`. */
export function redisAnswers(redis: Redis): Promise<boolean> {
  return redis.ping().then((reply) => reply === 'PONG');
}
