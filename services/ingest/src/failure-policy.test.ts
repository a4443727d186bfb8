import { CONFLICT_ATTEMPTS, POISON_ATTEMPTS, failureAction, runIsolated, splitByPersonsThenEvents, splitInHalves, type FailureKind, type FailureLevel } from './failure-policy.js';

const conflict = Object.assign(new Error('could not serialize access'), { code: '40001' });
const unavailable = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

describe('failure policy', () => {
  it.each<[FailureLevel, FailureKind, boolean, number, string]>([
    ['messages', 'unavailable', true, 1, 'wait'],
    ['messages', 'unavailable', false, 99, 'wait'],
    ['messages', 'conflict', false, 99, 'wait'],
    ['messages', 'permanent', true, 1, 'split'],
    ['messages', 'permanent', false, POISON_ATTEMPTS - 1, 'wait'],
    ['messages', 'permanent', false, POISON_ATTEMPTS, 'dead-letter'],
    ['persons', 'unavailable', false, 99, 'wait'],
    ['persons', 'conflict', true, CONFLICT_ATTEMPTS - 1, 'retry'],
    ['persons', 'conflict', true, CONFLICT_ATTEMPTS, 'split'],
    ['persons', 'conflict', false, CONFLICT_ATTEMPTS, 'dead-letter'],
    ['persons', 'permanent', true, 1, 'split'],
    ['persons', 'permanent', false, 1, 'dead-letter'],
  ])('at the %s level, a %s failure (splittable: %s), attempt %i: %s', (level, kind, splittable, attempts, action) => {
    expect(failureAction(level, kind, splittable, attempts)).toBe(action);
  });

  it('splits person changes by persons, then tries each event once more alone, even one that was its group', () => {
    const split = splitByPersonsThenEvents((items: readonly string[]) => [items.filter((i) => i !== 'c'), ['c']]);
    expect(split(['a', 'b', 'c'], 0)).toEqual([['a', 'b'], ['c']]);
    expect(split(['c'], 1)).toEqual([['c']]);
    expect(split(['c'], 2)).toBeNull();
    expect(splitInHalves(['a', 'b', 'c'])).toEqual([['a', 'b'], ['c']]);
    expect(splitInHalves(['a'])).toBeNull();
  });

  const isolate = (level: FailureLevel, failing: (items: readonly string[]) => Error | null, wait: (error: unknown) => Promise<void> = (error) => Promise.reject(error)) => {
    const runs: string[][] = [];
    const result = runIsolated<string, { done: string[]; dead: string[] }>(['a', 'b', 'c', 'd'], {
      level,
      run: async (items) => {
        runs.push([...items]);
        const error = failing(items);
        if (error) throw error;
        return { done: [...items], dead: [] };
      },
      split: splitInHalves,
      combine: (parts) => ({ done: parts.flatMap((p) => p.done), dead: parts.flatMap((p) => p.dead) }),
      deadLetter: (item) => ({ done: [], dead: [item] }),
      wait,
    });
    return { result, runs };
  };

  it('splits work that fails for an item of its own until that item is alone, and dead-letters it alone', async () => {
    const { result, runs } = isolate('persons', (items) => (items.includes('c') ? new Error('refused') : null));
    expect(await result).toEqual({ done: ['a', 'b', 'd'], dead: ['c'] });
    expect(runs).toEqual([['a', 'b', 'c', 'd'], ['a', 'b'], ['c', 'd'], ['c'], ['d']]);
  });

  it('retries a conflict at the persons level before it splits the work', async () => {
    let conflicts = 2;
    const { result, runs } = isolate('persons', () => (conflicts-- > 0 ? conflict : null));
    expect(await result).toEqual({ done: ['a', 'b', 'c', 'd'], dead: [] });
    expect(runs).toHaveLength(3);
  });

  it('never splits nor dead-letters work while a store is away: it waits, or throws to the level above', async () => {
    await expect(isolate('persons', () => unavailable).result).rejects.toBe(unavailable);
    let away = 3;
    const waits: number[] = [];
    const { result } = isolate('messages', () => (away-- > 0 ? unavailable : null), async () => void waits.push(away));
    expect(await result).toEqual({ done: ['a', 'b', 'c', 'd'], dead: [] });
    expect(waits).toHaveLength(3);
  });
});
