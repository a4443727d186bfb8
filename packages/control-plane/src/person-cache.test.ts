import type { Redis } from '@tributary/redis';
import { PersonCache, type CachedPerson } from './person-cache.js';

/** Just what PersonCache reads with: MGET, answered from a map, every call recorded. */
function fakeRedis(stored: Record<string, string>, fail?: Error) {
  const calls: string[][] = [];
  const redis = {
    mget: async (keys: string[]) => {
      calls.push(keys);
      if (fail) throw fail;
      return keys.map((k) => stored[k] ?? null);
    },
  };
  return { redis: redis as unknown as Redis, calls };
}

const ann: CachedPerson = { personId: 1, personUuid: 'uuid-ann', properties: { plan: 'pro' } };
const bob: CachedPerson = { personId: 2, personUuid: 'uuid-bob', properties: { plan: 'free' } };

describe('PersonCache.get', () => {
  it('reads the lookups of one event-loop turn with one MGET, each answered with its own person', async () => {
    const { redis, calls } = fakeRedis({ 'tributary:person:1:ann': JSON.stringify(ann), 'tributary:person:2:bob': JSON.stringify(bob) });
    const cache = new PersonCache(redis);
    const found = await Promise.all([cache.get(1, 'ann'), cache.get(2, 'bob'), cache.get(1, 'nobody'), cache.get(1, 'ann')]);
    expect(found).toEqual([ann, bob, null, ann]);
    expect(calls).toEqual([['tributary:person:1:ann', 'tributary:person:2:bob', 'tributary:person:1:nobody', 'tributary:person:1:ann']]);
  });

  it('sends a later turn’s lookups in a command of their own', async () => {
    const { redis, calls } = fakeRedis({ 'tributary:person:1:ann': JSON.stringify(ann) });
    const cache = new PersonCache(redis);
    expect(await cache.get(1, 'ann')).toEqual(ann);
    expect(await cache.get(1, 'ann')).toEqual(ann);
    expect(calls).toHaveLength(2);
  });

  it('fails every lookup of the command when Redis does, and only the one whose value is not JSON', async () => {
    const down = new PersonCache(fakeRedis({}, new Error('Command timed out')).redis);
    const both = await Promise.allSettled([down.get(1, 'ann'), down.get(1, 'bob')]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);

    const broken = new PersonCache(fakeRedis({ 'tributary:person:1:ann': '{not json', 'tributary:person:1:bob': JSON.stringify(bob) }).redis);
    const one = await Promise.allSettled([broken.get(1, 'ann'), broken.get(1, 'bob')]);
    expect(one).toEqual([expect.objectContaining({ status: 'rejected' }), { status: 'fulfilled', value: bob }]);
  });
});
