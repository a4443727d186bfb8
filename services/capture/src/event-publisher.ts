import type { Message, Producer, TopicMessages } from 'kafkajs';
import { GroupCommit, encodeCaptureMessage, mergeTopicMessages, sizeOfTopicMessages, messageKey, type CaptureMessage, type TopicNames } from '@tributary/kafka';
import type { OverflowDetector } from './overflow-detector.js';

export class PublishError extends Error {}

/** FNV-1a: a fast, stable spread of keys over producers (not a security hash). */
export function shardOf(key: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % shards;
}

/**
 * Publishes one request's events and resolves only when Kafka acknowledged all of them from
 * every in-sync replica. Historical batches keep their order on the historical topic and never
 * overflow; realtime events of a hot distinct id go to overflow, without a key, as PostHog does,
 * so they spread over its partitions. Concurrent requests share produce requests (group commit).
 *
 * kafkajs's idempotent producer keeps one produce request in flight, so one producer caps
 * throughput at one broker round trip at a time. Keys are spread over several producers by a
 * hash: a key always uses the same producer, which keeps each distinct id's events in order.
 */
export class EventPublisher {
  private readonly commits: GroupCommit<TopicMessages[]>[];
  private unkeyed = 0;

  constructor(
    producers: readonly Producer[],
    private readonly topics: TopicNames,
    private readonly overflow: OverflowDetector,
    private readonly timeoutMs: number,
  ) {
    this.commits = producers.map((producer) => new GroupCommit<TopicMessages[]>(
        (parts) => producer.sendBatch({ acks: -1, timeout: timeoutMs, topicMessages: mergeTopicMessages(parts) }),
        sizeOfTopicMessages,
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
    const hot = await this.overflow.hotKeys(counts);

    const byShard = new Map<number, Map<string, Message[]>>();
    messages.forEach((message, i) => {
      const key = keys[i]!;
      const topic = message.historical_migration ? this.topics.historical : hot.has(key) ? this.topics.overflow : this.topics.realtime;
      const keyed = topic !== this.topics.overflow;
      // Unkeyed (overflow) messages have no order to keep: they take the producers in turn.
      const shard = keyed ? shardOf(key, this.commits.length) : this.unkeyed++ % this.commits.length;
      let byTopic = byShard.get(shard);
      if (!byTopic) byShard.set(shard, (byTopic = new Map()));
      let list = byTopic.get(topic);
      if (!list) byTopic.set(topic, (list = []));
      list.push({ key: keyed ? key : null, value: encodeCaptureMessage(message) });
    });

    // kafkajs retries a broker that is away for longer than a client should wait; past the
    // deadline the client gets a 503 and retries, and uuids make a late duplicate harmless.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no acknowledgement within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const acknowledged = [...byShard].map(([shard, byTopic]) => this.commits[shard]!.submit([...byTopic].map(([topic, list]) => ({ topic, messages: list }))));
      await Promise.race([Promise.all(acknowledged), deadline]);
    } catch (error) {
      throw new PublishError(`Kafka did not acknowledge the events: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
