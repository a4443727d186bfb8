import type { Admin, Producer, ProducerBatch, ProducerRecord } from 'kafkajs';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Times every produce request of the producers it wraps and counts their failures and messages
 * per topic (so dead letters show as messages to the dead-letter topic). The wrapped producer is
 * the same object, so callers keep using the kafkajs API.
 */
export function produceMetrics(registry: Registry): (producer: Producer) => Producer {
  const duration = new Histogram({
    name: 'tributary_kafka_produce_duration_seconds',
    help: 'Time from a produce request to its acknowledgement (or failure), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const errors = new Counter({ name: 'tributary_kafka_produce_errors_total', help: 'Produce requests Kafka did not acknowledge.', registers: [registry] });
  const messages = new Counter({ name: 'tributary_kafka_produced_messages_total', help: 'Messages Kafka acknowledged, by topic.', labelNames: ['topic'] as const, registers: [registry] });

  async function timed<T>(work: () => Promise<T>, topics: readonly { topic: string; messages: readonly unknown[] }[]): Promise<T> {
    const stop = duration.startTimer();
    try {
      const result = await work();
      stop({ outcome: 'acknowledged' });
      for (const { topic, messages: list } of topics) messages.inc({ topic }, list.length);
      return result;
    } catch (error) {
      stop({ outcome: 'failed' });
      errors.inc();
      throw error;
    }
  }

  return (producer) => {
    const send = producer.send.bind(producer);
    const sendBatch = producer.sendBatch.bind(producer);
    producer.send = (record: ProducerRecord) => timed(() => send(record), [record]);
    producer.sendBatch = (batch: ProducerBatch) => timed(() => sendBatch(batch), batch.topicMessages ?? []);
    return producer;
  };
}

export interface PartitionLag {
  topic: string;
  partition: number;
  /** The group's committed offset; null when it has committed none on this partition yet. */
  committed: number | null;
  /** The offset the next message will get. */
  high: number;
  /** Messages the group has yet to commit (from the start of the log when it has committed none, as ingest reads from the beginning). */
  lag: number;
}

/** How far a consumer group is behind on each partition of `topics`, from the committed offsets. */
export async function consumerLag(admin: Admin, groupId: string, topics: readonly string[]): Promise<PartitionLag[]> {
  const [committed, ...ends] = await Promise.all([admin.fetchOffsets({ groupId, topics: [...topics] }), ...topics.map((topic) => admin.fetchTopicOffsets(topic))]);
  const out: PartitionLag[] = [];
  topics.forEach((topic, i) => {
    const byPartition = new Map((committed.find((c) => c.topic === topic)?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
    for (const end of ends[i]!) {
      const high = Number(end.high);
      const offset = byPartition.get(end.partition);
      const start = offset === undefined || offset < 0 ? null : offset;
      out.push({ topic, partition: end.partition, committed: start, high, lag: Math.max(0, high - (start ?? Number(end.low))) });
    }
  });
  return out;
}

/** Messages a topic holds now (what retention has not removed), summed over its partitions. */
export async function messagesOnTopic(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
}
