import { CompressionTypes, type KafkaMessage, type Message } from 'kafkajs';
import type { RenewingProducer } from '@tributary/kafka';
import type { RefusedRow } from './clickhouse-writer.js';

export interface DeadLetter {
  /**
   * The failed event as a message of its own (see EventProcessor), with its source offset; or a
   * row ClickHouse refused, as its TabSeparated line, with the offset of its chunk's first message.
   */
  message: Pick<KafkaMessage, 'key' | 'value' | 'offset'>;
  reason: string;
  /** For a row ClickHouse refused: its table, and the offset of its chunk's last message (the row came from a message between the two). */
  refusedRow?: { table: string; lastOffset?: string };
}

/** Where dead letters come from: a partition's chunk, or the person outbox, whose copies belong to no partition. */
export type DeadLetterSource = { topic: string; partition: number } | 'person outbox';

/**
 * A row ClickHouse refused, as a dead letter. `chunk`: the first and last offsets of the chunk
 * it came from (which of its messages made the row is not kept), when it came from one.
 */
export function refusedRowLetter({ table, line, reason }: RefusedRow, chunk?: { first: string; last: string }): DeadLetter {
  return { message: { key: null, value: line, offset: chunk?.first ?? '' }, reason: `ClickHouse refused the row: ${reason}`, refusedRow: { table, lastOffset: chunk?.last } };
}

/** A message whose processing failed on every attempt for a reason other than a store being away. */
export function failedMessageLetter(message: Pick<KafkaMessage, 'key' | 'value' | 'offset'>, error: unknown): DeadLetter {
  const reason = error instanceof Error ? error.message : String(error);
  return { message: { key: message.key, value: message.value, offset: message.offset }, reason: `ingest failed on this message: ${reason}` };
}

/** Dead letters as Kafka messages, each with headers saying why and where from. */
function deadLetterMessages(deadLetters: readonly DeadLetter[], source: DeadLetterSource, failedAt: string): Message[] {
  return deadLetters.map(({ message, reason, refusedRow }) => ({
    key: message.key,
    value: message.value,
    headers: {
      reason,
      ...(source === 'person outbox' ? { source } : { source_topic: source.topic, source_partition: String(source.partition), source_offset: message.offset }),
      failed_at: failedAt,
      ...(refusedRow ? { clickhouse_table: refusedRow.table, ...(refusedRow.lastOffset === undefined ? {} : { source_last_offset: refusedRow.lastOffset }) } : {}),
    },
  }));
}

/**
 * Sends dead letters to `topic`, compressed with LZ4 as capture sends events: a refused row's line
 * carries its event's properties and its person's, so it can be larger than the event that made
 * it, and uncompressed, larger than the broker takes (`message.max.bytes`), which would hold its
 * partition back as the refused row did.
 */
export async function sendDeadLetters(
  producer: Pick<RenewingProducer, 'send'>,
  topic: string,
  deadLetters: readonly DeadLetter[],
  source: DeadLetterSource,
  failedAt = new Date(),
): Promise<void> {
  await producer.send({ topic, acks: -1, compression: CompressionTypes.LZ4, messages: deadLetterMessages(deadLetters, source, failedAt.toISOString()) });
}
