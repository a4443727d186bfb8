import { CompressionTypes, type TopicMessages } from 'kafkajs';
import {
  GroupCommit,
  encodeCaptureEvents,
  mergeTopicMessages,
  messageKey,
  partitionOfKey,
  sizeOfTopicMessages,
  type CaptureMessage,
  type PartitionCounts,
  type RenewingProducer,
  type TopicNames,
} from '@tributary/kafka';
import type { OverflowDetector } from './overflow-detector.js';

export class PublishError extends Error {}

/**
 * Produce requests carrying less than SMALL_SEND_BYTES of events (single-event requests, say)
 * start at least SMALL_SEND_LINGER_MS apart, so that more requests share each: kafkajs's cost is
 * mostly per produce request, so sharing lowers capture's CPU per request and its tail latency.
 * Batches (of 100 events, say) are larger than the threshold and go at once.
 */
const SMALL_SEND_LINGER_MS = 3;
const SMALL_SEND_BYTES = 16 * 1024;

/** The events of one request bound for one partition, in request order. */
interface PartitionEvents {
  topic: string;
  partition: number;
  events: CaptureMessage[];
}

/**
 * Publishes one request's events and resolves only when Kafka acknowledged all of them from
 * every in-sync replica. Historical batches keep their order on the historical topic and never
 * overflow; realtime events of a hot distinct id go to overflow, spread over its partitions in
 * turn, as PostHog does with unkeyed messages.
 *
 * Encoding a Kafka message costs kafkajs more than the event in it does, so the events of a
 * request bound for one partition travel in one message (see `encodeCaptureEvents`). Each
 * event's partition is the one its key `token:distinct_id` hashes to, exactly where a message of
 * its own would go, so a person's events stay on one partition, in order. Concurrent requests
 * share produce requests (group commit). Message sets are LZ4-compressed natively, which costs
 * capture little: capture writes and the broker stores a fraction of the bytes, which saves the
 * broker CPU per event; gzip, kafkajs's one built-in codec, costs more than it saves.
 *
 * kafkajs's idempotent producer keeps one produce request in flight, so one producer caps
 * throughput at one broker round trip at a time. Partitions can be spread over several producers
 * (CAPTURE_KAFKA_PRODUCERS): a partition always uses the same producer, which keeps its messages
 * in order.
 */
export class EventPublisher {
  private readonly commits: GroupCommit<TopicMessages[]>[];
  // Where the next overflow event goes; a random start spreads the replicas' first events.
  private unkeyed = Math.floor(Math.random() * 0x7fffffff);

  constructor(
    producers: readonly Pick<RenewingProducer, 'sendBatch'>[],
    private readonly topics: TopicNames,
    private readonly partitions: Pick<PartitionCounts, 'get'>,
    private readonly overflow: Pick<OverflowDetector, 'hotKeys'>,
    private readonly timeoutMs: number,
  ) {
    this.commits = producers.map((producer) => new GroupCommit<TopicMessages[]>(
        (parts) => producer.sendBatch({ acks: -1, timeout: timeoutMs, compression: CompressionTypes.LZ4, topicMessages: mergeTopicMessages(parts) }),
        sizeOfTopicMessages,
        { minIntervalMs: SMALL_SEND_LINGER_MS, waitOnlyUnderBytes: SMALL_SEND_BYTES },
      ),
    );
  }

  async publish(messages: readonly CaptureMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const keys = messages.map((m) => messageKey(m.token, m.distinct_id));
    const counts = new Map<string, number>();
    messages.forEach((m, i) => {
      if (!m.historical_migration) counts.set(keys[i]!, (counts.get(keys[i]!) ?? 0) + 1);
    });
    const hot = this.overflow.hotKeys(counts);

    // kafkajs retries a broker that is away for longer than a client should wait; past the
    // deadline the client gets a 503 and retries, and uuids make a late duplicate harmless. So
    // does a request whose messages Kafka took only some of: it is a 503 too, and the retry sends
    // every event again under the uuid the SDK gave it, which the events table keeps once.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no acknowledgement within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([this.send(messages, keys, hot), deadline]);
    } catch (error) {
      throw new PublishError(`Kafka did not acknowledge the events: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(messages: readonly CaptureMessage[], keys: readonly string[], hot: ReadonlySet<string>): Promise<void> {
    const partitionCounts = await this.partitions.get();
    const byPartition = new Map<string, PartitionEvents>();
    messages.forEach((message, i) => {
      const key = keys[i]!;
      const topic = message.historical_migration ? this.topics.historical : hot.has(key) ? this.topics.overflow : this.topics.realtime;
      const count = partitionCounts.get(topic);
      if (count === undefined) throw new Error(`Kafka did not describe topic ${topic}`);
      let partition: number;
      if (topic === this.topics.overflow) {
        this.unkeyed = (this.unkeyed + 1) & 0x7fffffff;
        partition = this.unkeyed % count;
      } else {
        partition = partitionOfKey(key, count);
      }
      const at = `${topic}\u0000${partition}`;
      let bound = byPartition.get(at);
      if (!bound) byPartition.set(at, (bound = { topic, partition, events: [] }));
      bound.events.push(message);
    });

    const byShard = new Map<number, TopicMessages[]>();
    for (const { topic, partition, events } of byPartition.values()) {
      const shard = partition % this.commits.length;
      let topicMessages = byShard.get(shard);
      if (!topicMessages) byShard.set(shard, (topicMessages = []));
      topicMessages.push({ topic, messages: encodeCaptureEvents(events).map((value) => ({ partition, key: null, value })) });
    }
    await Promise.all([...byShard].map(([shard, topicMessages]) => this.commits[shard]!.submit(topicMessages)));
  }
}
