import type { Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { RenewingProducer } from './renewing-producer.js';

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
      await new Promise((resolve) => setTimeout(resolve, 5));
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
    await expect(producer.sendBatch(batch('b'))).rejects.toThrow('disconnected');
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
    await producer.sendBatch(batch('a'));
    expect(fakes.made.map(({ sent }) => sent)).toEqual([[], ['a']]);
  });
});
