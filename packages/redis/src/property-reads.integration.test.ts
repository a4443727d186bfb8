import { testConfig, uniqueName } from '@tributary/test-support';
import { PropertyReadCounter, createRedis, propertyReadCounts, type Redis } from './index.js';

/** The read counts behind `tributary properties:list` and `:auto`, in a Redis hash of each test's own. */
let redis: Redis;
beforeAll(() => {
  redis = createRedis(testConfig());
});
afterAll(() => redis.disconnect());

const read = (key: string, column = 'properties') => ({ column, key });

test('reads are counted in memory and added to the hash by a flush, most read first', async () => {
  const key = uniqueName('property-reads');
  const counter = new PropertyReadCounter(redis, { key });
  counter.record([read('$browser'), read('plan', 'person_properties')]);
  counter.record([read('$browser')]);
  expect(await propertyReadCounts(redis, key)).toEqual([]);
  await counter.flush();
  counter.record([read('$browser')]);
  await counter.flush();
  expect(await propertyReadCounts(redis, key)).toEqual([
    { column: 'properties', key: '$browser', reads: 3 },
    { column: 'person_properties', key: 'plan', reads: 1 },
  ]);
  await redis.del(key);
});

test("a hostile tenant's many keys take bounded room: per batch, in the hash, and by length", async () => {
  const key = uniqueName('property-reads');
  const counter = new PropertyReadCounter(redis, { key, maxPending: 3, maxFields: 4, maxKeyLength: 10 });
  counter.record([read('a'), read('b'), read('c'), read('d'), read('x'.repeat(11))]);
  await counter.flush();
  expect((await propertyReadCounts(redis, key)).map((c) => c.key)).toEqual(['a', 'b', 'c']);
  counter.record([read('e')]);
  await counter.flush();
  // The hash is full (4): only properties already counted go on counting.
  counter.record([read('f'), read('a')]);
  await counter.flush();
  expect(await propertyReadCounts(redis, key)).toEqual([
    { column: 'properties', key: 'a', reads: 2 },
    { column: 'properties', key: 'b', reads: 1 },
    { column: 'properties', key: 'c', reads: 1 },
    { column: 'properties', key: 'e', reads: 1 },
  ]);
  await redis.del(key);
});
