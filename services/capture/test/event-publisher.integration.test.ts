import { randomUUID } from 'node:crypto';
import {
  PartitionCounts,
  createKafka,
  createProducer,
  decodeMessageEvents,
  ensureTopics,
  messageKey,
  partitionOfKey,
  topicNames,
  type Admin,
  type CaptureMessage,
  type RenewingProducer,
} from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createRedis, type Redis } from '@tributary/redis';
import { testConfig, uniqueName, waitFor } from '@tributary/test-support';
import { EventPublisher } from '../src/event-publisher.js';
import { OverflowDetector } from '../src/overflow-detector.js';

const config = testConfig();
const logger = createLogger('publisher-test', config.logLevel);
const kafka = createKafka(config, logger, 'publisher-test');
const prefix = `${uniqueName('p')}_`;
const topics = topicNames(prefix);
let producers: RenewingProducer[];
let redis: Redis;
let admin: Admin;
let partitions: PartitionCounts;

beforeAll(async () => {
  admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, prefix, 4);
  partitions = new PartitionCounts(admin, [topics.realtime, topics.historical, topics.overflow]);
  producers = Array.from({ length: 4 }, () => createProducer(kafka));
  await Promise.all(producers.map((p) => p.connect()));
  redis = createRedis(config);
});

afterAll(async () => {
  await Promise.all([admin.disconnect(), ...producers.map((p) => p.disconnect())]);
  redis.disconnect();
});

const message = (distinctId: string, seq: number): CaptureMessage => ({
  uuid: randomUUID(),
  distinct_id: distinctId,
  ip: null,
  data: JSON.stringify({ event: 'e', distinct_id: distinctId, properties: { seq } }),
  now: new Date().toISOString(),
  sent_at: null,
  token: 'phc_test',
  historical_migration: false,
});

describe('event publisher over several producers', () => {
  it('keeps one distinct id in order across concurrent requests, on the partition of its key', async () => {
    const publisher = new EventPublisher(producers, topics, partitions, new OverflowDetector(redis, 1_000_000), 10_000);
    const ids = Array.from({ length: 8 }, (_, i) => `${uniqueName('user')}-${i}`);
    await Promise.all(Array.from({ length: 40 }, (_, seq) => publisher.publish(ids.map((id) => message(id, seq)))));

    const seen = new Map<string, number[]>();
    const placed = new Map<string, Set<number>>();
    const consumer = kafka.consumer({ groupId: uniqueName('publisher-reader') });
    await consumer.connect();
    await consumer.subscribe({ topic: topics.realtime, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message: m, partition }) => {
        for (const { decoded } of decodeMessageEvents(m)) {
          if (!decoded.ok) throw new Error(decoded.reason);
          const id = decoded.message.distinct_id;
          seen.set(id, [...(seen.get(id) ?? []), (JSON.parse(decoded.message.data) as { properties: { seq: number } }).properties.seq]);
          placed.set(id, (placed.get(id) ?? new Set()).add(partition));
        }
      },
    });
    await waitFor(async () => ids.every((id) => (seen.get(id)?.length ?? 0) >= 40), { what: '40 events for each id' });
    await consumer.disconnect();
    for (const id of ids) {
      expect(seen.get(id)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(placed.get(id)).toEqual(new Set([partitionOfKey(messageKey('phc_test', id), 4)]));
    }
  });
});

describe('spike detection', () => {
  /** A Redis client that records the name of every command sent through it. */
  async function recorded(): Promise<{ redis: Redis; sent: string[] }> {
    const redis = createRedis(config);
    // Connected first: a command queued while connecting is sent through sendCommand twice.
    await redis.ping();
    const sent: string[] = [];
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: Parameters<Redis['sendCommand']>[0]) => {
      sent.push(command.name);
      return send(command);
    }) as Redis['sendCommand'];
    return { redis, sent };
  }

  it('answers at once from its own counts, and adds a whole interval of requests to Redis in one call', async () => {
    const { redis: counted, sent } = await recorded();
    // One fixed second: on a busy machine the calls below could otherwise straddle two windows.
    const second = Date.now();
    const detector = new OverflowDetector(counted, 5, { clock: () => second, syncIntervalMs: 60_000 });
    const busy = `phc_test:${uniqueName('busy')}`;
    const quiet = Array.from({ length: 50 }, (_, i) => `phc_test:${uniqueName('quiet')}-${i}`);
    const counts = new Map([[busy, 4], ...quiet.map((key) => [key, 1] as [string, number])]);

    expect(detector.hotKeys(counts)).toEqual(new Set());
    expect(detector.hotKeys(counts)).toEqual(new Set([busy]));
    expect(detector.hotKeys(new Map([[busy, 1]]))).toEqual(new Set([busy]));
    // Nothing was sent while the requests were answered. The first sync is due at once, then
    // one a minute, so the next two requests' counts wait for sync().
    expect(sent).toEqual([]);
    await waitFor(async () => sent.length > 0, { what: 'the first sync' });
    const firstSync = sent.length;
    detector.hotKeys(counts);
    detector.hotKeys(counts);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sent).toHaveLength(firstSync);
    await detector.sync();
    // Redis knows the script after the first sync, so the second is one EVALSHA.
    expect(sent.slice(firstSync)).toEqual(['evalsha']);
    const stored = await counted.hmget(`tributary:capture-rate:${Math.floor(second / 1000)}`, busy, quiet[0]!);
    expect(stored).toEqual(['17', '4']);
    counted.disconnect();
  });

  it('learns from Redis what the other replicas counted, keeping every key exact whatever characters it holds', async () => {
    const a = createRedis(config);
    const b = createRedis(config);
    const second = Date.now();
    const replicas = [new OverflowDetector(a, 5, { clock: () => second }), new OverflowDetector(b, 5, { clock: () => second })];
    const odd = ['with space 1', 'new\nline\n2', 'ünïcødé 🙂 3', '', '10 digits first'].map((id) => `phc_test:${uniqueName('odd')}${id}`);
    const own = `phc_test:${uniqueName('own')}`;
    // Three each: neither replica is over the limit of 5 alone, together they are.
    for (const replica of replicas) expect(replica.hotKeys(new Map([...odd.map((key) => [key, 3] as [string, number]), [own, 1]]))).toEqual(new Set());
    await Promise.all(replicas.map((replica) => replica.sync()));
    // The replica that synced first learns of the others' counts at its next sync.
    for (const replica of replicas) replica.hotKeys(new Map(odd.map((key) => [key, 0])));
    await Promise.all(replicas.map((replica) => replica.sync()));
    for (const replica of replicas) expect(replica.hotKeys(new Map([...odd.map((key) => [key, 0] as [string, number]), [own, 0]]))).toEqual(new Set(odd));
    const stored = await a.hmget(`tributary:capture-rate:${Math.floor(second / 1000)}`, ...odd, own);
    expect(stored).toEqual([...odd.map(() => '6'), '2']);
    a.disconnect();
    b.disconnect();
  });

  it('keeps a key found over the limit hot through the next second, and then starts afresh', async () => {
    const redis = createRedis(config);
    let now = Math.floor(Date.now() / 1000) * 1000;
    const replicas = [new OverflowDetector(redis, 2, { clock: () => now }), new OverflowDetector(redis, 2, { clock: () => now })];
    const own = `phc_test:${uniqueName('own')}`;
    const shared = `phc_test:${uniqueName('shared')}`;
    // Over at the first replica by its own count; over only together for the other key.
    expect(replicas[0]!.hotKeys(new Map([[own, 3], [shared, 2]]))).toEqual(new Set([own]));
    expect(replicas[1]!.hotKeys(new Map([[shared, 1]]))).toEqual(new Set());
    await replicas[0]!.sync();
    await replicas[1]!.sync();
    expect(replicas[1]!.hotKeys(new Map([[shared, 0]]))).toEqual(new Set([shared]));
    now += 1000;
    expect(replicas[0]!.hotKeys(new Map([[own, 1]]))).toEqual(new Set([own]));
    expect(replicas[1]!.hotKeys(new Map([[shared, 1]]))).toEqual(new Set([shared]));
    now += 1000;
    expect(replicas[0]!.hotKeys(new Map([[own, 1]]))).toEqual(new Set());
    expect(replicas[1]!.hotKeys(new Map([[shared, 1]]))).toEqual(new Set());
    redis.disconnect();
  });

  it('still catches what one replica sees alone when Redis refuses every command', async () => {
    // A closed connection rejects every command at once, as a client does when Redis is away.
    const down = createRedis(config);
    await down.quit();
    const detector = new OverflowDetector(down, 1);
    expect(detector.hotKeys(new Map([['phc_test:x', 100], ['phc_test:y', 1]]))).toEqual(new Set(['phc_test:x']));
    await detector.sync();
    expect(detector.hotKeys(new Map([['phc_test:y', 0]]))).toEqual(new Set());
  });
});
