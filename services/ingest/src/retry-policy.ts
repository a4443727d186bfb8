import { isStoreUnavailable } from '@tributary/http';
import type { Logger } from '@tributary/logger';
import { ConcurrentClaimError } from './persons/ingest-person-store.js';

/**
 * What a failure says about the work that hit it:
 * - `unavailable`: a store is away; the same work must wait and run again, never be dropped;
 * - `conflict`: another transaction got in the way (a claimed distinct id, a serialization
 *   failure or deadlock); running it again soon will pass;
 * - `permanent`: the work itself is at fault and will fail again.
 */
export type FailureKind = 'unavailable' | 'conflict' | 'permanent';

const CONFLICT_CODES = new Set(['40001', '40P01']);

export function classifyFailure(error: unknown): FailureKind {
  if (error instanceof ConcurrentClaimError) return 'conflict';
  if (CONFLICT_CODES.has(String((error as { code?: unknown } | null)?.code ?? ''))) return 'conflict';
  return isStoreUnavailable(error) ? 'unavailable' : 'permanent';
}

/**
 * Runs `work`, again on conflicts up to `attempts` times; other failures are thrown at once. A
 * short random wait lets the transaction that won finish, so two replicas do not collide again.
 */
export async function retryConflicts<T>(work: () => Promise<T>, attempts: number, logger: Logger): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (classifyFailure(error) !== 'conflict' || attempt >= attempts) throw error;
      logger.debug({ err: error, attempt }, 'conflict with a concurrent transaction, retrying');
      await new Promise((resolve) => setTimeout(resolve, attempt * (10 + Math.random() * 40)));
    }
  }
}
