import type { Producer, ProducerBatch, ProducerRecord, RecordMetadata, TopicMessages } from 'kafkajs';

/** A send never given to Kafka, and never to be: its deadline passed before its turn came, or no producer could connect. */
export class SendNotStartedError extends Error {}

export interface SendOptions {
  /**
   * How long the caller waits, from the call, for the acknowledgement. A send still waiting for
   * its turn then is dropped and fails with `SendNotStartedError`, so nothing of it is written;
   * one already under way fails with a plain error, and Kafka may still write it.
   */
  deadlineMs?: number;
}

/**
 * An idempotent producer that is never used again once one of its sends has failed.
 *
 * kafkajs numbers each partition's batches for the broker's duplicate detection, and when a
 * produce request fails it winds the numbers back, although the broker may have written the batch
 * (its answer was lost in a disconnect, or came after the request timed out). The next batch then
 * carries the numbers of a batch already written, and the broker takes it for a retry of that one:
 * it answers with the earlier batch's offset and writes nothing, so events that were acknowledged
 * to a client are lost (shown against a real broker in renewing-producer.integration.test.ts).
 * After a failed send the next one therefore goes through a new kafkajs producer, to which the
 * broker gives a new producer id whose numbers start afresh: the Java client bumps the epoch for
 * the same reason (KIP-360).
 *
 * Sends go one at a time: a send already waiting inside kafkajs behind a failing one would take
 * the wound-back numbers before the failure could be seen here. Callers that need throughput
 * batch their messages into fewer sends (capture's group commit) rather than sending concurrently.
 * While Kafka is away each send waits for the ones before it to fail, so a caller that answers
 * someone gives its send a deadline (`SendOptions`).
 */
export class RenewingProducer {
  private current: Producer | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private disconnected = false;

  /** `create` makes a new, unconnected kafkajs producer each time it is called. */
  constructor(private readonly create: () => Producer) {}

  /** Connects now, so that a broker that cannot be reached fails a service's start, not its first send. */
  connect(): Promise<void> {
    return this.serially(async () => undefined);
  }

  send(record: ProducerRecord, options: SendOptions = {}): Promise<RecordMetadata[]> {
    return this.serially((producer) => producer.send(record), options.deadlineMs);
  }

  sendBatch(batch: ProducerBatch, options: SendOptions = {}): Promise<RecordMetadata[]> {
    return this.serially((producer) => producer.sendBatch(batch), options.deadlineMs);
  }

  /** Waits for the sends already made, then disconnects; sends after this fail. */
  async disconnect(): Promise<void> {
    this.disconnected = true;
    await this.tail;
    const producer = this.current;
    this.current = null;
    await producer?.disconnect();
  }

  private serially<T>(work: (producer: Producer) => Promise<T>, deadlineMs?: number): Promise<T> {
    if (this.disconnected) return Promise.reject(new SendNotStartedError('The Kafka producer was disconnected.'));
    let started = false;
    let expired = false;
    const run = this.tail.then(async () => {
      if (expired) throw new SendNotStartedError('not sent');
      started = true;
      const producer = await this.connected().catch((error: unknown) => {
        throw new SendNotStartedError(`not sent: no producer could connect (${(error as Error).message})`, { cause: error });
      });
      try {
        return await work(producer);
      } catch (error) {
        this.retire(producer);
        throw error;
      }
    });
    this.tail = run.catch(() => undefined);
    if (deadlineMs === undefined) return run;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = !started;
        reject(
          expired
            ? new SendNotStartedError(`not sent: the sends before it were still under way after ${deadlineMs} ms`)
            : new Error(`no acknowledgement within ${deadlineMs} ms`),
        );
      }, deadlineMs);
    });
    return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
  }

  private async connected(): Promise<Producer> {
    if (this.current) return this.current;
    const producer = this.create();
    try {
      await producer.connect();
    } catch (error) {
      this.retire(producer);
      throw error;
    }
    this.current = producer;
    return producer;
  }

  /** Closes a producer whose numbering can no longer be trusted; nothing waits on it closing. */
  private retire(producer: Producer): void {
    if (this.current === producer) this.current = null;
    producer.disconnect().catch(() => undefined);
  }
}

/**
 * A kafkajs producer whose sends fail when their acknowledgement leaves out a partition they
 * addressed. kafkajs drops, without an error, messages for a partition its metadata does not know
 * yet (one added since it last asked, up to five minutes before); failed instead, the send is
 * retried by its caller through the next producer, which starts with fresh metadata. Applied to
 * the kafkajs producer itself, so that metrics wrapped around it count such a send as failed.
 */
export function acknowledgingEveryPartition(producer: Producer): Producer {
  const send = producer.send.bind(producer);
  const sendBatch = producer.sendBatch.bind(producer);
  producer.send = async (record: ProducerRecord) => allAcknowledged([record], record.acks, await send(record));
  producer.sendBatch = async (batch: ProducerBatch) => allAcknowledged(batch.topicMessages ?? [], batch.acks, await sendBatch(batch));
  return producer;
}

function allAcknowledged(sent: readonly TopicMessages[], acks: number | undefined, acknowledged: RecordMetadata[]): RecordMetadata[] {
  if (acks === 0) return acknowledged;
  const named = new Set(acknowledged.map(({ topicName, partition }) => `${topicName}/${partition}`));
  const missing = new Set<string>();
  for (const { topic, messages } of sent) {
    for (const { partition } of messages) {
      // kafkajs's partitioner takes a null partition as none given, as it does an absent one.
      if (partition !== undefined && partition !== null && !named.has(`${topic}/${partition}`)) missing.add(`${topic}/${partition}`);
    }
  }
  if (missing.size > 0) throw new Error(`Kafka did not acknowledge the messages for ${[...missing].join(', ')}: the producer did not know of those partitions yet.`);
  return acknowledged;
}
