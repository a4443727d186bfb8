import type { Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { Registry } from 'prom-client';
import { produceMetrics } from './metrics.js';
import { acknowledgingEveryPartition, RenewingProducer, SendNotStartedError } from './renewing-producer.js';

/** kafkajs producers as far as RenewingProducer uses them, each failing the sends it is told to. */
function fakeProducers(failing: Set<string>) {
  const made: { id: number; connected: boolean; sent: string[] }[] = [];
  let active = 0;
  let mostActive = 0;
  const create = () => {
    const state = { id: made.length, connected: false, sent: [] as string[] };
    made.push(state);
    const sendBatch = async (batch: ProducerBatch): Promise<RecordMetadata[]> => {
      const value = String(batch.topicMessages![0]!.messages[0]!.value);
      active++;
      mostActive = Math.max(mostActive, active);
      await new Promise((resolve) => setTimeout(resolve, value.startsWith('slow') ? 200 : 5));
      active--;
      if (failing.has(value)) throw new Error(`lost the answer to ${value}`);
      state.sent.push(value);
      return [];
    };
    return {
      connect: async () => void (state.connected = true),
      disconnect: async () => void (state.connected = false),
      sendBatch,
      send: async () => [],
    } as unknown as Producer;
  };
  return { made, create, mostActive: () => mostActive };
}

const batch = (value: string): ProducerBatch => ({ topicMessages: [{ topic: 't', messages: [{ value }] }] });

describe('RenewingProducer', () => {
  it('sends through a new producer after a failed send, and closes the one that failed', async () => {
    const fakes = fakeProducers(new Set(['b']));
    const producer = new RenewingProducer(fakes.create);
    await producer.connect();
    await producer.sendBatch(batch('a'));
    await expect(producer.sendBatch(batch('b'))).rejects.toThrow('lost the answer to b');
    await producer.sendBatch(batch('c'));
    await producer.sendBatch(batch('d'));
    expect(fakes.made.map(({ sent, connected }) => ({ sent, connected }))).toEqual([
      { sent: ['a'], connected: false },
      { sent: ['c', 'd'], connected: true },
    ]);
  });

  it('sends one batch at a time, so none queued behind a failing send reaches its producer', async () => {
    const fakes = fakeProducers(new Set(['b']));
    const producer = new RenewingProducer(fakes.create);
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((value) => producer.sendBatch(batch(value))));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(fakes.mostActive()).toBe(1);
    expect(fakes.made.map(({ sent }) => sent)).toEqual([['a'], ['c', 'd']]);
  });

  it('waits for sends already made when disconnecting, and refuses sends after it', async () => {
    const fakes = fakeProducers(new Set());
    const producer = new RenewingProducer(fakes.create);
    const sending = producer.sendBatch(batch('a'));
    await producer.disconnect();
    await sending;
    expect(fakes.made).toEqual([{ id: 0, connected: false, sent: ['a'] }]);
    await expect(producer.sendBatch(batch('b'))).rejects.toThrow(SendNotStartedError);
    expect(fakes.made).toHaveLength(1);
  });

  it('makes a new producer for the next send when connecting failed', async () => {
    let attempts = 0;
    const fakes = fakeProducers(new Set());
    const producer = new RenewingProducer(() => {
      const made = fakes.create();
      if (attempts++ === 0) made.connect = async () => Promise.reject(new Error('broker away'));
      return made;
    });
    await expect(producer.connect()).rejects.toThrow('broker away');
    await expect(producer.connect()).resolves.toBeUndefined();
    await producer.sendBatch(batch('a'));
    expect(fakes.made.map(({ sent }) => sent)).toEqual([[], ['a']]);
  });

  it('drops a send whose deadline passes while it waits behind others, so nothing of it is written', async () => {
    const fakes = fakeProducers(new Set());
    const producer = new RenewingProducer(fakes.create);
    const slow = producer.sendBatch(batch('slow a'));
    const started = Date.now();
    await expect(producer.sendBatch(batch('b'), { deadlineMs: 50 })).rejects.toThrow(SendNotStartedError);
    expect(Date.now() - started).toBeLessThan(150);
    await slow;
    await producer.sendBatch(batch('c'));
    expect(fakes.made.map(({ sent }) => sent)).toEqual([['slow a', 'c']]);
  });

  it('fails a send under way at its deadline with a plain error: Kafka may still write it', async () => {
    const fakes = fakeProducers(new Set());
    const producer = new RenewingProducer(fakes.create);
    const outcome = producer.sendBatch(batch('slow a'), { deadlineMs: 50 }).catch((error: unknown) => error);
    expect(await outcome).toEqual(new Error('no acknowledgement within 50 ms'));
    expect(await outcome).not.toBeInstanceOf(SendNotStartedError);
    await producer.disconnect();
    expect(fakes.made.map(({ sent }) => sent)).toEqual([['slow a']]);
  });

  it('fails a send as never sent when no producer could connect', async () => {
    const fakes = fakeProducers(new Set());
    const producer = new RenewingProducer(() => {
      const made = fakes.create();
      made.connect = async () => Promise.reject(new Error('broker away'));
      return made;
    });
    const failure = await producer.sendBatch(batch('a')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SendNotStartedError);
    expect((failure as Error).message).toBe('not sent: no producer could connect (broker away)');
  });

  it('resolves a send acknowledged within its deadline', async () => {
    const fakes = fakeProducers(new Set());
    const producer = new RenewingProducer(fakes.create);
    await expect(producer.sendBatch(batch('a'), { deadlineMs: 1_000 })).resolves.toEqual([]);
  });
});

describe('acknowledgingEveryPartition', () => {
  /** A kafkajs producer that acknowledges partition 0 of topic t only, as kafkajs does when its metadata lacks the others. */
  const knowingPartitionZero = () =>
    ({ send: async () => [{ topicName: 't', partition: 0, errorCode: 0 }], sendBatch: async () => [{ topicName: 't', partition: 0, errorCode: 0 }] }) as unknown as Producer;

  it('fails a send whose acknowledgement leaves out a partition it addressed, and metrics count it as failed', async () => {
    const registry = new Registry();
    const producer = produceMetrics(registry)(acknowledgingEveryPartition(knowingPartitionZero()));
    await expect(producer.send({ topic: 't', messages: [{ value: 'a', partition: 0 }, { value: 'b', partition: 1 }] })).rejects.toThrow('t/1');
    await expect(producer.sendBatch({ topicMessages: [{ topic: 't', messages: [{ value: 'a', partition: 0 }] }] })).resolves.toHaveLength(1);
    const metrics = await registry.getMetricsAsJSON();
    const value = (name: string) => metrics.find((m) => m.name === name)!.values.map((v) => v.value);
    expect(value('tributary_kafka_produce_errors_total')).toEqual([1]);
    expect(value('tributary_kafka_produced_messages_total')).toEqual([1]);
  });

  it('takes a message without a partition, or with a null one, as left to the partitioner, and checks nothing when acks is 0', async () => {
    const producer = acknowledgingEveryPartition(knowingPartitionZero());
    await expect(producer.send({ topic: 't', messages: [{ value: 'a' }, { value: 'b', partition: null as unknown as number }] })).resolves.toHaveLength(1);
    await expect(producer.send({ topic: 't', acks: 0, messages: [{ value: 'b', partition: 1 }] })).resolves.toHaveLength(1);
  });
});
