import { createRequire } from 'node:module';
import { CompressionTypes, type ICustomPartitioner, type ProducerBatch } from 'kafkajs';
import { decodeMessageEvents, messageKey, topicNames, type CaptureMessage, type DecodeResult, type RenewingProducer } from '@tributary/kafka';
import { EventPublisher, PublishError } from './event-publisher.js';

// kafkajs's own default partitioner (Java-compatible murmur2) is the reference for where a
// message keyed token:distinct_id goes: every event must land exactly there.
const { Partitioners } = createRequire(import.meta.url)('kafkajs') as { Partitioners: { DefaultPartitioner: ICustomPartitioner } };

const topics = topicNames('t_');

interface Sent {
  producer: number;
  topic: string;
  partition: number;
  key: unknown;
  events: CaptureMessage[];
  compression: number | undefined;
}

function readable(decoded: DecodeResult): CaptureMessage {
  if (!decoded.ok) throw new Error(decoded.reason);
  return decoded.message;
}

/** Producers that acknowledge every batch and record what they were given, message by message. */
function recordingProducers(count: number, fail?: (producer: number) => boolean) {
  const sent: Sent[] = [];
  const producers = Array.from({ length: count }, (_, producer): Pick<RenewingProducer, 'sendBatch'> => ({
    sendBatch: async (batch: ProducerBatch) => {
      if (fail?.(producer)) throw new Error(`producer ${producer} lost its broker`);
      for (const { topic, messages } of batch.topicMessages ?? []) {
        for (const m of messages) {
          const events = decodeMessageEvents({ key: null, value: Buffer.from(m.value as string), offset: '0', timestamp: '0', attributes: 0, headers: {} });
          sent.push({ producer, topic, partition: m.partition!, key: m.key, events: events.map(({ decoded }) => readable(decoded)), compression: batch.compression });
        }
      }
      return [];
    },
  }));
  return { producers, sent };
}

const partitionCounts = (partitions: number) => ({ get: async () => new Map([topics.realtime, topics.historical, topics.overflow].map((t) => [t, partitions])) });
const noneHot = { hotKeys: () => new Set<string>() };

let seq = 0;
const event = (distinctId: string, extra: Partial<CaptureMessage> = {}): CaptureMessage => ({
  uuid: `0190f3c0-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
  distinct_id: distinctId,
  ip: '127.0.0.1',
  data: JSON.stringify({ event: 'e', distinct_id: distinctId, properties: { seq } }),
  now: '2026-01-01T00:00:00.000Z',
  sent_at: null,
  token: 'phc_test',
  historical_migration: false,
  ...extra,
});

function referencePartition(key: string, partitions: number): number {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], offlineReplicas: [], partitionErrorCode: 0 }));
  return Partitioners.DefaultPartitioner()({ topic: topics.realtime, partitionMetadata, message: { key, value: '' } });
}

describe('event publisher', () => {
  it.each([8, 3, 1])('puts every event on the partition its token:distinct_id key gives with kafkajs’s default partitioner (%i partitions)', async (partitions) => {
    const { producers, sent } = recordingProducers(4);
    const publisher = new EventPublisher(producers, topics, partitionCounts(partitions), noneHot, 1_000);
    const events = Array.from({ length: 300 }, (_, i) => event(`user-${i % 97}-ünï 🙂`, { token: i % 2 ? 'phc_test' : 'phc_other' }));
    await publisher.publish(events);
    const placed = sent.flatMap((s) => s.events.map((e) => [e.uuid, s.partition] as const));
    expect(new Map(placed)).toEqual(new Map(events.map((e) => [e.uuid, referencePartition(messageKey(e.token, e.distinct_id), partitions)])));
    expect(placed).toHaveLength(events.length);
  });

  it('sends one message per partition a request reaches, each distinct id’s events in request order', async () => {
    const { producers, sent } = recordingProducers(2);
    const publisher = new EventPublisher(producers, topics, partitionCounts(8), noneHot, 1_000);
    const ids = Array.from({ length: 20 }, (_, i) => `user-${i}`);
    const events = Array.from({ length: 100 }, (_, i) => event(ids[(i * 7) % ids.length]!));
    await publisher.publish(events);
    const partitions = sent.map((s) => s.partition);
    expect(new Set(partitions).size).toBe(partitions.length);
    expect(sent.every((s) => s.topic === topics.realtime && s.key === null)).toBe(true);
    // LZ4 message sets: about a fifth of the bytes for capture to write and the broker to keep.
    expect(sent.every((s) => s.compression === CompressionTypes.LZ4)).toBe(true);
    for (const id of ids) {
      expect(sent.flatMap((s) => s.events).filter((e) => e.distinct_id === id)).toEqual(events.filter((e) => e.distinct_id === id));
    }
  });

  it('keeps a partition on one producer, so its messages stay in order across requests', async () => {
    const { producers, sent } = recordingProducers(3);
    const publisher = new EventPublisher(producers, topics, partitionCounts(8), noneHot, 1_000);
    await Promise.all(Array.from({ length: 10 }, () => publisher.publish(Array.from({ length: 50 }, (_, i) => event(`user-${i}`)))));
    const producersOf = new Map<number, Set<number>>();
    for (const s of sent) producersOf.set(s.partition, (producersOf.get(s.partition) ?? new Set()).add(s.producer));
    expect([...producersOf.values()].every((set) => set.size === 1)).toBe(true);
    expect(new Set(sent.map((s) => s.producer)).size).toBe(3);
  });

  it('sends a historical batch to the historical topic, never to overflow, and a hot distinct id’s realtime events to overflow, spread over its partitions', async () => {
    const { producers, sent } = recordingProducers(1);
    const hot = { hotKeys: () => new Set([messageKey('phc_test', 'hot')]) };
    const publisher = new EventPublisher(producers, topics, partitionCounts(4), hot, 1_000);
    const historical = Array.from({ length: 10 }, () => event('hot', { historical_migration: true }));
    await publisher.publish(historical);
    expect(sent.map((s) => s.topic)).toEqual([topics.historical]);
    expect(sent[0]!.events).toEqual(historical);

    sent.length = 0;
    const realtime = [...Array.from({ length: 8 }, () => event('hot')), event('calm')];
    await publisher.publish(realtime);
    const overflow = sent.filter((s) => s.topic === topics.overflow);
    expect(overflow.map((s) => s.partition).sort()).toEqual([0, 1, 2, 3]);
    expect(overflow.flatMap((s) => s.events.map((e) => e.distinct_id))).toEqual(Array(8).fill('hot'));
    expect(sent.filter((s) => s.topic === topics.realtime).flatMap((s) => s.events)).toEqual([realtime[8]]);
  });

  it('fails the whole request when any of its messages is not acknowledged, so the client retries all of it', async () => {
    const { producers } = recordingProducers(2, (producer) => producer === 1);
    const publisher = new EventPublisher(producers, topics, partitionCounts(8), noneHot, 1_000);
    await expect(publisher.publish(Array.from({ length: 50 }, (_, i) => event(`user-${i}`)))).rejects.toThrow(PublishError);
  });

  it('fails when Kafka cannot say how many partitions a topic has', async () => {
    const { producers, sent } = recordingProducers(1);
    const unknown = { get: async () => new Map<string, number>() };
    await expect(new EventPublisher(producers, topics, unknown, noneHot, 1_000).publish([event('a')])).rejects.toThrow(/did not describe/);
    const away = { get: () => Promise.reject(new Error('broker unreachable')) };
    await expect(new EventPublisher(producers, topics, away, noneHot, 1_000).publish([event('a')])).rejects.toThrow(PublishError);
    expect(sent).toEqual([]);
  });
});
