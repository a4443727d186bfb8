import { createRedis, type Redis } from '@tributary/redis';
import { testConfig, waitFor } from '@tributary/test-support';
import { PersonCache } from './person-cache.js';

/**
 * Decide's reading side with local copies against the real Redis, and ingest's writing side on a
 * connection of its own, as the two services run.
 */
const config = testConfig();
const team = 900_000 + Math.floor(Math.random() * 100_000);
let mgets = 0;
const copyLookups: boolean[] = [];
let reader: Redis;
let writerRedis: Redis;
let decideSide: PersonCache;
let ingestSide: PersonCache;

beforeAll(async () => {
  const real = createRedis(config);
  // The reading connection as decide has it, counting the reads that reach Redis.
  reader = new Proxy(real, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (property === 'mget') mgets += 1;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  writerRedis = createRedis(config);
  decideSide = new PersonCache(reader, { localCopies: { maxEntries: 1_000, maxAgeMs: 60_000 }, countCopyLookup: (hit) => copyLookups.push(hit) });
  ingestSide = new PersonCache(writerRedis);
  await decideSide.untilLocalCopies();
});

afterAll(() => {
  decideSide.close();
  reader.disconnect();
  writerRedis.disconnect();
});

it('answers a person asked again from memory, and sees what ingest writes or forgets next', async () => {
  const person = { personId: 1, personUuid: 'uuid-ann', properties: { plan: 'free' } };
  await ingestSide.set(team, ['ann', 'ann-anon'], person);
  expect(await decideSide.get(team, 'ann')).toEqual(person);
  const before = mgets;
  copyLookups.length = 0;
  expect(await decideSide.get(team, 'ann')).toEqual(person);
  expect(mgets).toBe(before);
  expect(copyLookups).toEqual([true]);

  await ingestSide.set(team, ['ann', 'ann-anon'], { ...person, properties: { plan: 'pro' } });
  await waitFor(async () => (await decideSide.get(team, 'ann'))?.properties.plan === 'pro', { what: 'the new properties', intervalMs: 10 });
  expect(mgets).toBe(before + 1);

  await ingestSide.forget(team, ['ann']);
  await waitFor(async () => (await decideSide.get(team, 'ann')) === null, { what: 'the person forgotten', intervalMs: 10 });
});

it('gives the copy it holds without waiting, counted as a hit, and nothing for a person it holds no copy of', async () => {
  const person = { personId: 3, personUuid: 'uuid-cat', properties: { plan: 'free' } };
  await ingestSide.set(team, ['cat'], person);
  copyLookups.length = 0;
  expect(decideSide.copy(team, 'cat')).toBeUndefined();
  expect(await decideSide.get(team, 'cat')).toEqual(person);
  expect(decideSide.copy(team, 'cat')).toEqual(person);
  expect(copyLookups).toEqual([false, true]);
  await ingestSide.set(team, ['cat'], { ...person, properties: { plan: 'pro' } });
  await waitFor(async () => decideSide.copy(team, 'cat') === undefined, { what: 'the copy dropped once ingest changed the person', intervalMs: 10 });
  expect(ingestSide.copy(team, 'cat')).toBeUndefined();
});

it('asks Redis every time for an id it has no person for, so a person created later is seen at once', async () => {
  expect(await decideSide.get(team, 'bob')).toBeNull();
  const before = mgets;
  expect(await decideSide.get(team, 'bob')).toBeNull();
  expect(mgets).toBe(before + 1);
  const bob = { personId: 2, personUuid: 'uuid-bob', properties: {} };
  await ingestSide.set(team, ['bob'], bob);
  expect(await decideSide.get(team, 'bob')).toEqual(bob);
});

it('stores a chunk’s many persons under every distinct id of each, across several script calls, each key expiring in 7 days', async () => {
  // 600 persons take three calls; every seventh has no distinct id left and is skipped.
  const entries = Array.from({ length: 600 }, (_, i) => ({
    teamId: team,
    distinctIds: Array.from({ length: i % 7 === 0 ? 0 : (i % 3) + 1 }, (_, k) => `many-${i}-${k}`),
    person: { personId: 10_000 + i, personUuid: `uuid-many-${i}`, properties: { i, name: `Zoë ${i}`, tags: ['a', 'b'] } },
  }));
  await ingestSide.setMany(entries);
  for (const { distinctIds, person } of entries) {
    for (const id of distinctIds) expect(JSON.parse((await writerRedis.get(`tributary:person:${team}:${id}`))!)).toEqual(person);
  }
  const ttl = await writerRedis.ttl(`tributary:person:${team}:many-599-0`);
  expect(ttl).toBeGreaterThan(7 * 24 * 3600 - 60);
  expect(ttl).toBeLessThanOrEqual(7 * 24 * 3600);
  expect(await writerRedis.exists(`tributary:person:${team}:many-0-0`)).toBe(0);
});

it("forgets every cached person of a project that is gone, and nobody else's", async () => {
  const gone = team + 1;
  // A project whose id starts with the gone one's digits, to show the match stops at the separator.
  const other = Number(`${gone}1`);
  const person = (id: number) => ({ personId: id, personUuid: `uuid-gone-${id}`, properties: { id } });
  // Found over several SCAN steps, so the cursor is followed.
  await ingestSide.setMany(Array.from({ length: 1_500 }, (_, i) => ({ teamId: gone, distinctIds: [`gone-${i}`], person: person(i) })));
  await ingestSide.setMany([{ teamId: other, distinctIds: ['stays'], person: person(1) }]);
  expect(await ingestSide.forgetProject(gone)).toBe(1_500);
  expect(await writerRedis.exists(`tributary:person:${gone}:gone-0`, `tributary:person:${gone}:gone-1499`)).toBe(0);
  expect(await writerRedis.exists(`tributary:person:${other}:stays`)).toBe(1);
  expect(await ingestSide.forgetProject(other)).toBe(1);
});
