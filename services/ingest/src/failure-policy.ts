import { isStoreUnavailable } from '@tributary/http';
import { ConcurrentClaimError } from './persons/ingest-person-store.js';

/**
 * Where a bad event is dead-lettered, and what else a failure leads to: the one policy for
 * ingest's retries, splits and dead letters, at both levels work is done at.
 *
 * - `messages`: a partition's chunk of Kafka messages (PartitionPipeline). A chunk that fails for
 *   its own content is halved until the message at fault is alone; that one is tried a few times
 *   more, then dead-lettered with the error. A store that is away, or a conflict that escaped the
 *   persons step, is waited out: a message taken from Kafka is never dropped for it.
 * - `persons`: the person changes of a chunk's events, applied in one transaction (the persons
 *   step). A conflict with a concurrent transaction is retried at once a few times; work that
 *   still fails is split into the groups of events that touch the same persons, then into single
 *   events, and an event whose changes fail alone is dead-lettered, so the events beside it keep
 *   their persons. A store that is away is thrown, for the messages level to wait out.
 *
 * Rows ClickHouse refuses for their content are dead-lettered by the pipeline too, once written
 * (see RowWriter.write): they are found only by the insert.
 */
export type FailureLevel = 'messages' | 'persons';

/**
 * What a failure says about the work that hit it:
 * - `unavailable`: a store is away; the same work must wait and run again, never be dropped;
 * - `conflict`: another transaction got in the way (a claimed distinct id, a serialization
 *   failure or deadlock); running it again soon will pass;
 * - `permanent`: the work itself is at fault and will fail again.
 */
export type FailureKind = 'unavailable' | 'conflict' | 'permanent';

/**
 * - `wait`: run the same work again after a backoff (or, at the persons level, throw it to the
 *   messages level, which waits);
 * - `retry`: run it again after a short random wait, so two replicas do not collide again;
 * - `split`: run its parts one by one, each under this policy;
 * - `dead-letter`: the work is one item: give it up, with the error.
 */
export type FailureAction = 'wait' | 'retry' | 'split' | 'dead-letter';

/**
 * Attempts at a message alone before it is dead-lettered: enough that a passing fault costs no
 * event, few enough that one bad message holds its partition back for about a second.
 */
export const POISON_ATTEMPTS = 3;

/** Attempts at person changes that conflict with concurrent transactions before they are split up or dead-lettered. */
export const CONFLICT_ATTEMPTS = 5;

const CONFLICT_CODES = new Set(['40001', '40P01']);

export function classifyFailure(error: unknown): FailureKind {
  if (error instanceof ConcurrentClaimError) return 'conflict';
  if (CONFLICT_CODES.has(String((error as { code?: unknown } | null)?.code ?? ''))) return 'conflict';
  return isStoreUnavailable(error) ? 'unavailable' : 'permanent';
}

/**
 * The policy itself: what to do with work after its `attempts`-th failure of this kind, when it
 * can still be split or not. `conflictAttempts` is CONFLICT_ATTEMPTS unless a test sets it.
 */
export function failureAction(level: FailureLevel, kind: FailureKind, splittable: boolean, attempts: number, conflictAttempts = CONFLICT_ATTEMPTS): FailureAction {
  if (kind === 'unavailable') return 'wait';
  if (level === 'persons') {
    if (kind === 'conflict' && attempts < conflictAttempts) return 'retry';
    return splittable ? 'split' : 'dead-letter';
  }
  if (kind === 'conflict') return 'wait';
  if (splittable) return 'split';
  return attempts < POISON_ATTEMPTS ? 'wait' : 'dead-letter';
}

/** How a chunk of messages that fails for its content is split: in halves, until the message at fault is alone. */
export function splitInHalves<T>(items: readonly T[]): T[][] | null {
  if (items.length < 2) return null;
  const half = Math.ceil(items.length / 2);
  return [items.slice(0, half), items.slice(half)];
}

/**
 * How person changes that keep failing are split: first into the groups of events that touch the
 * same persons (`groupsOf`), so that one bad event costs only its own persons' events a second
 * try, then into single events, each tried once more on its own, even one that was its group.
 */
export function splitByPersonsThenEvents<T>(groupsOf: (items: readonly T[]) => T[][]): (items: readonly T[], depth: number) => T[][] | null {
  return (items, depth) => (depth === 0 ? groupsOf(items) : depth === 1 ? items.map((item) => [item]) : null);
}

/** How one level runs its work under the policy. */
export interface IsolatedWork<T, R> {
  level: FailureLevel;
  run: (items: readonly T[]) => Promise<R>;
  /** The parts failing work is split into, `depth` the number of splits it came through; null once it cannot be split. */
  split: (items: readonly T[], depth: number) => (readonly T[])[] | null;
  combine: (parts: R[]) => R;
  /** What work given up becomes (one item, once it cannot be split): its dead letter and no rows. */
  deadLetter: (item: T, error: unknown) => R;
  /** Waits out a store that is away (or a conflict, at the messages level); throws to stop trying. */
  wait: (error: unknown, attempts: number) => Promise<void>;
  /** Told before work is split, for the log. */
  splitting?: (error: unknown, items: number) => void;
  conflictAttempts?: number;
}

/** Runs `work` over `items` as the policy says, until it is done, split and done, or dead-lettered. */
export async function runIsolated<T, R>(items: readonly T[], work: IsolatedWork<T, R>, depth = 0): Promise<R> {
  const attempts = new Map<FailureKind, number>();
  // Asked only once the work failed: splitting by persons reads every event of the chunk.
  let parts: (readonly T[])[] | null | undefined;
  for (;;) {
    try {
      return await work.run(items);
    } catch (error) {
      const kind = classifyFailure(error);
      const attempt = (attempts.get(kind) ?? 0) + 1;
      attempts.set(kind, attempt);
      if (parts === undefined) parts = work.split(items, depth);
      switch (failureAction(work.level, kind, parts !== null, attempt, work.conflictAttempts)) {
        case 'wait':
          await work.wait(error, attempt);
          break;
        case 'retry':
          await new Promise((resolve) => setTimeout(resolve, attempt * (10 + Math.random() * 40)));
          break;
        case 'split': {
          work.splitting?.(error, items.length);
          const results: R[] = [];
          for (const part of parts!) results.push(await runIsolated(part, work, depth + 1));
          return work.combine(results);
        }
        case 'dead-letter':
          return work.deadLetter(items[0]!, error);
      }
    }
  }
}
