import { randomUUID } from 'node:crypto';
import { createKafka, createProducer, ensureTopics, topicNames, type CaptureMessage, type Producer } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createRedis, type Redis } from '@tributary/redis';
import { testConfig, uniqueName, waitFor } from '@tributary/test-support';
import { EventPublisher, shardOf } from '../src/event-publisher.js';
import { OverflowDetector } from '../src/overflow-detector.js';

const config = testConfig();
const logger = createLogger('publisher-test', config.logLevel);
const kafka = createKafka(config, logger, 'publisher-test');
const prefix = `${uniqueName('p')}_`;
const topics = topicNames(prefix);
let producers: Producer[];
let redis: Redis;

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, prefix, 4);
  await admin.disconnect();
  producers = Array.from({ length: 4 }, () => createProducer(kafka));
  await Promise.all(producers.map((p) => p.connect()));
  redis = createRedis(config);
});

afterAll(async () => {
  await Promise.all(producers.map((p) => p.disconnect()));
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
  it('spreads keys over producers, the same key always to the same one', () => {
    const shards = Array.from({ length: 1000 }, (_, i) => shardOf(`phc_x:user-${i}`, 4));
    expect(new Set(shards)).toEqual(new Set([0, 1, 2, 3]));
    expect(Math.min(...[0, 1, 2, 3].map((s) => shards.filter((x) => x === s).length))).toBeGreaterThan(150);
    expect(shardOf('phc_x:user-7', 4)).toBe(shardOf('phc_x:user-7', 4));
  });

  it('sends every message of a key through one producer, and unkeyed overflow through all of them', async () => {
    const keysBy = producers.map(() => new Set<string>());
    let unkeyed = producers.map(() => 0);
    const recording = producers.map((producer, i) => ({
      ...producer,
      sendBatch: (batch: Parameters<Producer['sendBatch']>[0]) => {
        for (const { messages } of batch.topicMessages ?? []) {
          for (const m of messages) {
            if (m.key === null || m.key === undefined) unkeyed[i]! += 1;
            else keysBy[i]!.add(String(m.key));
          }
        }
        return producer.sendBatch(batch);
      },
    })) as Producer[];
    const publisher = new EventPublisher(recording, topics, new OverflowDetector(redis, 1_000_000), 10_000);
    const ids = Array.from({ length: 41 }, (_, i) => `${uniqueName('spread')}-${i}`);
    await Promise.all(Array.from({ length: 5 }, (_, seq) => publisher.publish(ids.map((id) => message(id, seq)))));
    const owners = ids.map((id) => keysBy.filter((keys) => keys.has(`phc_test:${id}`)).length);
    expect(owners).toEqual(ids.map(() => 1));
    expect(keysBy.filter((keys) => keys.size > 0).length).toBeGreaterThan(1);

    unkeyed = producers.map(() => 0);
    const hot = new EventPublisher(recording, topics, new OverflowDetector(redis, 1), 10_000);
    const busy = uniqueName('busy');
    await hot.publish(Array.from({ length: 20 }, (_, seq) => message(busy, seq)));
    await hot.publish(Array.from({ length: 20 }, (_, seq) => message(busy, seq)));
    expect(unkeyed.filter((n) => n > 0).length).toBeGreaterThan(1);
  });

  it('keeps one distinct id in order across concurrent requests, while other ids use other producers', async () => {
    const publisher = new EventPublisher(producers, topics, new OverflowDetector(redis, 1_000_000), 10_000);
    const ids = Array.from({ length: 8 }, (_, i) => `${uniqueName('user')}-${i}`);
    await Promise.all(Array.from({ length: 40 }, (_, seq) => publisher.publish(ids.map((id) => message(id, seq)))));

    const seen = new Map<string, number[]>();
    const consumer = kafka.consumer({ groupId: uniqueName('publisher-reader') });
    await consumer.connect();
    await consumer.subscribe({ topic: topics.realtime, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message: m }) => {
        const parsed = JSON.parse(String(m.value)) as CaptureMessage;
        seen.set(parsed.distinct_id, [...(seen.get(parsed.distinct_id) ?? []), (JSON.parse(parsed.data) as { properties: { seq: number } }).properties.seq]);
      },
    });
    // The topic also holds the previous test's messages: wait for this test's own ids.
    await waitFor(async () => ids.every((id) => (seen.get(id)?.length ?? 0) >= 40), { what: '40 messages for each id' });
    await consumer.disconnect();
    for (const id of ids) expect(seen.get(id)).toEqual(Array.from({ length: 40 }, (_, i) => i));
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
    const detector = new OverflowDetector(counted, 5);
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

  it('reroutes nothing when Redis cannot answer', async () => {
    // A closed connection rejects every command at once, as a client does when Redis is away.
    const down = createRedis(config);
    await down.quit();
    expect(await new OverflowDetector(down, 1).hotKeys(new Map([['phc_test:x', 100]]))).toEqual(new Set());
  });
});
