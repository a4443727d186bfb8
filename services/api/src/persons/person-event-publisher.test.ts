import type { Producer } from 'kafkajs';
import { RenewingProducer, SendNotStartedError } from '@tributary/kafka';
import { PersonEventPublisher } from './person-event-publisher.js';

describe('PersonEventPublisher', () => {
  it('gives up on a change still waiting behind earlier sends once its deadline passes, and never sends it', async () => {
    // While Kafka is away each send takes kafkajs's retries; here the first never ends until told to.
    let finishFirst = () => {};
    const sent: string[] = [];
    const kafkajs = {
      connect: async () => undefined,
      disconnect: async () => undefined,
      send: async (record: { messages: { value: Buffer }[] }) => {
        const value = record.messages[0]!.value.toString();
        if (sent.length === 0) await new Promise<void>((resolve) => (finishFirst = resolve));
        sent.push(value);
        return [];
      },
    } as unknown as Producer;
    const publisher = new PersonEventPublisher(new RenewingProducer(() => kafkajs), 'events', 50);
    const first = publisher.publish('token', 'id-1', '$set', { $set: { a: 1 } }).catch((error: unknown) => error);
    const started = Date.now();
    await expect(publisher.publish('token', 'id-2', '$set', { $set: { b: 2 } })).rejects.toThrow(SendNotStartedError);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await first).toEqual(new Error('no acknowledgement within 50 ms'));
    finishFirst();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('id-1');
  });
});
