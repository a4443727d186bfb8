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
  type Producer,
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
let producers: Producer[];
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
  it('counts a whole request in one Redis call, and routes only the ids over the rate to overflow', async () => {
    const counted = createRedis(config);
    const sent: string[] = [];
    const send = counted.sendCommand.bind(counted);
    counted.sendCommand = ((command: Parameters<Redis['sendCommand']>[0]) => {
      sent.push(command.name);
      return send(command);
    }) as Redis['sendCommand'];
    // One fixed second: on a busy machine the calls below could otherwise straddle two windows.
    const second = Date.now();
    const detector = new OverflowDetector(counted, 5, () => second);
    const busy = `phc_test:${uniqueName('busy')}`;
    const quiet = Array.from({ length: 50 }, (_, i) => `phc_test:${uniqueName('quiet')}-${i}`);
    const counts = new Map([[busy, 4], ...quiet.map((key) => [key, 1] as [string, number])]);

    expect(await detector.hotKeys(counts)).toEqual(new Set());
    expect(await detector.hotKeys(counts)).toEqual(new Set([busy]));
    // The script is loaded once (EVALSHA answers NOSCRIPT, then EVAL); after that, one call a request.
    sent.length = 0;
    expect(await detector.hotKeys(new Map([[busy, 1]]))).toEqual(new Set([busy]));
    expect(sent).toEqual(['evalsha']);
    counted.disconnect();
  });

  it('counts requests that arrive while a call is in flight together, each learning only its own hot ids, whatever characters they hold', async () => {
    const counted = createRedis(config);
    let calls = 0;
    const send = counted.sendCommand.bind(counted);
    counted.sendCommand = ((command: Parameters<Redis['sendCommand']>[0]) => {
      if (command.name === 'evalsha') calls += 1;
      return send(command);
    }) as Redis['sendCommand'];
    const second = Date.now();
    const detector = new OverflowDetector(counted, 3, () => second);
    const odd = ['with space 1', 'new\nline\n2', 'ünïcødé 🙂 3', '', '10 digits first'].map((id) => `phc_test:${uniqueName('odd')}${id}`);
    // Each id is sent twice by each of 4 concurrent requests: 8 a second, over the limit of 3,
    // and only the request that named an id hears that it is hot.
    const requests = Array.from({ length: 4 }, (_, r) => new Map([...odd.map((key) => [key, 2] as [string, number]), [`phc_test:${uniqueName('own')}-${r}`, 1]]));
    await detector.hotKeys(new Map([[`phc_test:${uniqueName('first')}`, 1]]));
    calls = 0;
    const answers = await Promise.all(requests.map((counts) => detector.hotKeys(counts)));
    // The first goes alone (2 each: not over); the other three wait for it and share one call.
    expect(calls).toBe(2);
    expect(answers).toEqual([new Set(), new Set(odd), new Set(odd), new Set(odd)]);
    // However the calls were grouped, the counts add up exactly.
    const again = await detector.hotKeys(new Map(odd.map((key) => [key, 0])));
    expect(again).toEqual(new Set(odd));
    const stored = await counted.hmget(`tributary:capture-rate:${Math.floor(second / 1000)}`, ...odd);
    expect(stored).toEqual(odd.map(() => '8'));
    counted.disconnect();
  });

  it('reroutes nothing when Redis cannot answer', async () => {
    // A closed connection rejects every command at once, as a client does when Redis is away.
    const down = createRedis(config);
    await down.quit();
    expect(await new OverflowDetector(down, 1).hotKeys(new Map([['phc_test:x', 100]]))).toEqual(new Set());
  });
});
