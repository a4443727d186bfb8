import { randomUUID } from 'node:crypto';
import { testConfig, waitFor } from '@tributary/test-support';
import { createRedis, type Redis } from './index.js';
import { TrackedCopies } from './tracked-copies.js';

/**
 * Against the real Redis: values are kept only while Redis tracks them, and every way a kept
 * value could go stale (a change, a change overtaking a read's reply, a lost connection on
 * either side) drops it.
 */
const config = testConfig();
let reader: Redis;
let writer: Redis;
let copies: TrackedCopies<{ v: string }>;
const errors: unknown[] = [];

beforeEach(async () => {
  reader = createRedis(config);
  writer = createRedis(config);
  copies = new TrackedCopies(reader, { maxEntries: 100, maxAgeMs: 60_000, onError: (error) => errors.push(error) });
  await copies.untilTracking();
});

afterEach(() => {
  copies.close();
  reader.disconnect();
  writer.disconnect();
});

const key = () => `tributary:test:tracked:${randomUUID()}`;

/** A read as a user of TrackedCopies makes it: begin, MGET on the reader, end with the parsed values. */
async function read(keys: string[]) {
  const started = copies.beginRead(keys);
  const values = (await reader.mget(keys)).map((value) => (value === null ? null : (JSON.parse(value) as { v: string })));
  copies.endRead(started, values);
  return values;
}

/** The reading connection's own client id, or the id of the connection its invalidations go to. */
const clientIdWith = async (field: 'id' | 'redir') => Number(new RegExp(`(?:^| )${field}=(\\d+)`).exec(String(await reader.client('INFO')))?.[1]);

it('keeps what a read answered, and nothing for a key that has no value', async () => {
  const [k, missing] = [key(), key()];
  await writer.set(k, JSON.stringify({ v: 'one' }));
  expect(await read([k, missing])).toEqual([{ v: 'one' }, null]);
  expect(copies.get(k)).toEqual({ v: 'one' });
  expect(copies.get(missing)).toBeUndefined();
});

it('drops a copy as soon as another connection changes or deletes its key', async () => {
  const [changed, deleted] = [key(), key()];
  await writer.mset(changed, JSON.stringify({ v: 'one' }), deleted, JSON.stringify({ v: 'gone' }));
  await read([changed, deleted]);
  await writer.set(changed, JSON.stringify({ v: 'two' }));
  await writer.del(deleted);
  await waitFor(async () => copies.get(changed) === undefined && copies.get(deleted) === undefined, { what: 'both copies dropped' });
  expect(await read([changed])).toEqual([{ v: 'two' }]);
  expect(copies.get(changed)).toEqual({ v: 'two' });
});

it('does not keep a read’s answer when a change of its key arrived while it was in flight', async () => {
  const k = key();
  await writer.set(k, JSON.stringify({ v: 'old' }));
  await read([k]);
  // A read sent before the change whose reply comes after the invalidation: the reply is the old value.
  const inFlight = copies.beginRead([k]);
  await writer.set(k, JSON.stringify({ v: 'new' }));
  await waitFor(async () => inFlight?.spoiled.has(k), { what: 'the invalidation' });
  copies.endRead(inFlight, [{ v: 'old' }]);
  expect(copies.get(k)).toBeUndefined();
});

it.each(['invalidation', 'reading'] as const)('forgets every copy when the %s connection drops, and keeps again once tracking is back', async (side) => {
  const k = key();
  await writer.set(k, JSON.stringify({ v: 'before' }));
  await read([k]);
  const victim = await clientIdWith(side === 'reading' ? 'id' : 'redir');
  await writer.client('KILL', 'ID', String(victim));
  // ioredis reconnects after 50 ms: until tracking is confirmed again, nothing may be answered from memory.
  await waitFor(async () => !copies.isTracking, { what: 'tracking to lapse', intervalMs: 5, timeoutMs: 2_000 });
  expect(copies.get(k)).toBeUndefined();
  // Changed while the connection was down: its invalidation, if any, went nowhere.
  await writer.set(k, JSON.stringify({ v: 'after' }));
  await copies.untilTracking();
  expect(copies.get(k)).toBeUndefined();
  expect(await read([k])).toEqual([{ v: 'after' }]);
  expect(copies.get(k)).toEqual({ v: 'after' });
  if (side === 'invalidation') expect(await clientIdWith('redir')).not.toBe(victim);
  expect(errors).toEqual([]);
});

it('keeps at most maxEntries, the least recently asked going first', async () => {
  const ownReader = createRedis(config);
  const small = new TrackedCopies<{ v: string }>(ownReader, { maxEntries: 2, maxAgeMs: 60_000 });
  try {
    await small.untilTracking();
    const keys = [key(), key(), key()];
    await writer.mset(...keys.flatMap((k, i) => [k, JSON.stringify({ v: String(i) })]));
    const started = small.beginRead(keys);
    small.endRead(started, (await ownReader.mget(keys)).map((value) => JSON.parse(value!) as { v: string }));
    expect(keys.map((k) => small.get(k)?.v)).toEqual([undefined, '1', '2']);
  } finally {
    small.close();
    ownReader.disconnect();
  }
});

it('starts tracking once a command that starts it works again, after failing at first', async () => {
  const user = `tributary-test-tracking-${randomUUID()}`;
  // A user refused CLIENT TRACKING until the test allows it: a failure as a timeout under load would be, but certain.
  await writer.call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all', '-client|tracking');
  const url = new URL(config.redisUrl);
  url.username = user;
  url.password = 'secret';
  const ownReader = createRedis({ redisUrl: url.toString() });
  const refused: unknown[] = [];
  const slow = new TrackedCopies<{ v: string }>(ownReader, { maxEntries: 10, maxAgeMs: 60_000, retryMs: 50, onError: (error) => refused.push(error) });
  try {
    await waitFor(async () => refused.length > 0, { what: 'a refused CLIENT TRACKING' });
    expect(slow.isTracking).toBe(false);
    await writer.call('ACL', 'SETUSER', user, '+client|tracking');
    await slow.untilTracking(2_000);
    const k = key();
    await writer.set(k, JSON.stringify({ v: 'kept' }));
    const started = slow.beginRead([k]);
    slow.endRead(started, (await ownReader.mget([k])).map((value) => JSON.parse(value!) as { v: string }));
    expect(slow.get(k)).toEqual({ v: 'kept' });
  } finally {
    slow.close();
    ownReader.disconnect();
    await writer.call('ACL', 'DELUSER', user);
  }
});
