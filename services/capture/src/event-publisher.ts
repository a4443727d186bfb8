import type { Producer } from 'kafkajs';
import { GroupCommit, encodeCaptureMessage, messageKey, type CaptureMessage, type TopicNames } from '@tributary/kafka';
import type { OverflowDetector } from './overflow-detector.js';

export class PublishError extends Error {}

/**
 * Publishes one request's events and resolves only when Kafka acknowledged all of them from
 * every in-sync replica. Historical batches keep their order on the historical topic and never
 * overflow; realtime events of a hot distinct id go to overflow, without a key, as PostHog does,
 * so they spread over its partitions. Concurrent requests share produce requests (group commit).
 */
export class EventPublisher {
  private readonly commit: GroupCommit;

  constructor(
    producer: Producer,
    private readonly topics: TopicNames,
    private readonly overflow: OverflowDetector,
    private readonly timeoutMs: number,
  ) {
    this.commit = new GroupCommit((topicMessages) => producer.sendBatch({ acks: -1, timeout: timeoutMs, topicMessages }));
  }

  async publish(messages: readonly CaptureMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const byTopic = new Map<string, { key: string | null; value: string }[]>();
    const add = (topic: string, key: string | null, message: CaptureMessage) => {
      const list = byTopic.get(topic) ?? [];
      list.push({ key, value: encodeCaptureMessage(message) });
      byTopic.set(topic, list);
    };

    const realtime = messages.filter((m) => !m.historical_migration);
    const counts = new Map<string, number>();
    for (const m of realtime) {
      const key = messageKey(m.token, m.distinct_id);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const hot = await this.overflow.hotKeys(counts);
    for (const message of messages) {
      const key = messageKey(message.token, message.distinct_id);
      if (message.historical_migration) add(this.topics.historical, key, message);
      else if (hot.has(key)) add(this.topics.overflow, null, message);
      else add(this.topics.realtime, key, message);
    }

    // kafkajs retries a broker that is away for longer than a client should wait; past the
    // deadline the client gets a 503 and retries, and uuids make a late duplicate harmless.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no acknowledgement within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([this.commit.submit([...byTopic].map(([topic, list]) => ({ topic, messages: list }))), deadline]);
    } catch (error) {
      throw new PublishError(`Kafka did not acknowledge the events: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
