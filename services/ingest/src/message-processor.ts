import type { KafkaMessage } from 'kafkajs';
import type { RowBuffer } from './clickhouse-rows.js';
import type { DeadLetter } from './dead-letters.js';

/**
 * Applies a run of one partition's messages, in order: adds their events' rows to the buffer, or
 * a dead letter for an event that can never succeed (one per event, also when its message
 * carried several). Throws when a store is away, to be retried.
 */
export interface MessageProcessor {
  processBatch(messages: readonly KafkaMessage[], rows: RowBuffer, deadLetters: DeadLetter[]): Promise<void>;
}
