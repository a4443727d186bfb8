import type { KafkaMessage } from 'kafkajs';
import { eventsInMessage } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import { RowBuffer } from './clickhouse-rows.js';
import { detach } from './event-memory.js';
import type { RefusedRow } from './clickhouse-writer.js';
import { failedMessageLetter, refusedRowLetter, type DeadLetter } from './dead-letters.js';
import type { MessageProcessor } from './message-processor.js';
import { runIsolated, splitInHalves } from './failure-policy.js';

export interface PartitionPipelineDeps {
  topic: string;
  partition: number;
  processor: MessageProcessor;
  /** Resolves once ClickHouse accepted the rows, with those it refused for their content and did not take. */
  writeRows: (rows: RowBuffer) => Promise<readonly RefusedRow[]>;
  sendDeadLetters: (topic: string, partition: number, deadLetters: DeadLetter[]) => Promise<void>;
  /** Commits `offset` (the next one to read) for this partition. */
  commit: (offset: string) => Promise<void>;
  /** Called when the queue has room again after `enqueue` said it was full. */
  resume: () => void;
  logger: Logger;
  /** Most events per chunk; a chunk holds whole messages, so a message with more is a chunk of its own. */
  chunkSize: number;
  /** Events queued before the partition is paused; asked each time, as the process's share per partition changes with its partitions. */
  maxQueued: () => number;
  /**
   * Chunks processed whose offsets are not committed yet: with a few, a partition goes on
   * processing while its earlier chunks wait for a ClickHouse insert (which may hold rows back
   * for INGEST_INSERT_INTERVAL_MS); each holds its encoded rows in memory until then.
   */
  maxChunksAhead: number;
  /**
   * Runs a chunk's processing when the process has room for it; shared by every partition, as
   * processing is CPU work and each chunk in it holds its events in memory.
   */
  limit: <T>(work: () => Promise<T>) => Promise<T>;
  /** Backoff while a store is away: first wait and cap, in milliseconds. */
  retryDelayMs?: { first: number; max: number };
}

interface ProcessedChunk {
  rows: RowBuffer;
  deadLetters: DeadLetter[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Queued {
  message: KafkaMessage;
  events: number;
}

/**
 * One partition's messages on their way to ClickHouse, decoupled from Kafka's fetch loop so a
 * slow partition never holds back another's next fetch. Chunks and the queue are measured in
 * events, as a message may carry one event or many. Chunks are processed in order; later
 * chunks are processed while earlier chunks' rows wait for their insert (up to
 * `maxChunksAhead`), and offsets are committed in order, each only after its own rows (and dead
 * letters) and every earlier chunk's were accepted. Work that
 * fails because a store is away waits and runs again: a message taken from Kafka is never
 * skipped, only replayed after a crash.
 */
export class PartitionPipeline {
  private queue: Queued[] = [];
  private queuedEvents = 0;
  /** The offset after the last message taken; a re-fetch after a rebalance repeats those before it. */
  private nextOffset: bigint | null = null;
  private draining: Promise<void> | null = null;
  private revoked = false;
  private full = false;

  constructor(private readonly deps: PartitionPipelineDeps) {}

  get idle(): boolean {
    return this.draining === null;
  }

  /** Events taken from Kafka and not yet in a chunk. */
  get queued(): number {
    return this.queuedEvents;
  }

  /** Takes a fetched batch; false when the queue is full and the partition should be paused. */
  enqueue(messages: readonly KafkaMessage[]): boolean {
    for (const message of messages) {
      const offset = BigInt(message.offset);
      if (this.nextOffset !== null && offset < this.nextOffset) continue;
      const events = eventsInMessage(message.value);
      this.queue.push({ message: detach(message), events });
      this.queuedEvents += events;
      this.nextOffset = offset + 1n;
    }
    if (!this.draining && this.queue.length > 0) {
      this.draining = this.drain().catch((error: unknown) => {
        // Only a revoked pipeline gives up: its partition is replayed by the new owner.
        if (!this.revoked) this.deps.logger.error({ err: error, topic: this.deps.topic, partition: this.deps.partition }, 'ingest pipeline stopped');
      });
    }
    this.full = this.queuedEvents >= this.deps.maxQueued();
    return !this.full;
  }

  /** The partition went to another consumer: drop what was not started and commit nothing more. */
  revoke(): void {
    this.revoked = true;
    this.queue = [];
    this.queuedEvents = 0;
  }

  /** Resolves when everything taken so far is written and committed (or the pipeline was revoked). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    // Each chunk's commit, oldest first; each waits for the one before it, so they settle in order.
    const ahead: Promise<void>[] = [];
    try {
      for (;;) {
        if (this.queue.length === 0 || this.revoked) {
          if (ahead.length === 0) return;
          await ahead.shift();
          continue;
        }
        // The chunk is taken once there is room to process it: what arrives meanwhile joins it.
        const processed = await this.deps.limit(async () => {
          if (this.queue.length === 0 || this.revoked) return null;
          const chunk = this.takeChunk();
          if (this.full && this.queuedEvents < this.deps.maxQueued() / 2) {
            this.full = false;
            this.deps.resume();
          }
          return { ...(await this.processChunk(chunk)), offsets: { first: chunk[0]!.offset, last: chunk.at(-1)!.offset } };
        });
        if (!processed) continue;
        const { rows, deadLetters, offsets } = processed;
        // The write starts now, so the chunk can join an insert with the chunks before it; the commit waits its turn.
        ahead.push(this.commitAfter(ahead.at(-1), this.accepted(rows, deadLetters, offsets), offsets.last));
        while (ahead.length >= this.deps.maxChunksAhead) await ahead.shift();
      }
    } finally {
      // Cleared in the same tick as the empty-queue check, so a batch enqueued after it starts a new drain.
      this.draining = null;
    }
  }

  /**
   * Processes a chunk under the failure policy (see failure-policy.ts): stores that are away are
   * waited out; a chunk that fails for its content is halved until the message at fault is alone,
   * and that one is dead-lettered with the error while the others are processed.
   */
  private processChunk(chunk: readonly KafkaMessage[]): Promise<ProcessedChunk> {
    return runIsolated(chunk, {
      level: 'messages',
      run: async (messages) => {
        const rows = new RowBuffer();
        const deadLetters: DeadLetter[] = [];
        await this.deps.processor.processBatch(messages, rows, deadLetters);
        return { rows, deadLetters };
      },
      split: splitInHalves,
      combine: (parts) => ({ rows: RowBuffer.concat(parts.map((p) => p.rows)), deadLetters: parts.flatMap((p) => p.deadLetters) }),
      deadLetter: (message, error) => {
        this.deps.logger.error({ err: error, topic: this.deps.topic, partition: this.deps.partition, offset: message.offset }, 'message fails ingest; dead-lettered');
        return { rows: new RowBuffer(), deadLetters: [failedMessageLetter(message, error)] };
      },
      wait: (error, attempt) => this.backoff('process', error, attempt),
    });
  }

  private takeChunk(): KafkaMessage[] {
    let events = this.queue[0]!.events;
    let count = 1;
    while (count < this.queue.length && events + this.queue[count]!.events <= this.deps.chunkSize) events += this.queue[count++]!.events;
    this.queuedEvents -= events;
    return this.queue.splice(0, count).map((queued) => queued.message);
  }

  /**
   * Resolves once ClickHouse took the rows and Kafka the dead letters, among them the rows
   * ClickHouse refused for their content: those would fail on every attempt and hold the
   * partition back for good. Rejects only once revoked.
   */
  private async accepted(rows: RowBuffer, deadLetters: DeadLetter[], offsets: { first: string; last: string }): Promise<void> {
    const { topic, partition } = this.deps;
    const refused = await this.untilDone('write', () => this.deps.writeRows(rows));
    for (const row of refused) deadLetters.push(refusedRowLetter(row, offsets));
    if (deadLetters.length > 0) await this.untilDone('dead-letter', () => this.deps.sendDeadLetters(topic, partition, deadLetters));
  }

  /** Commits past the chunk once it and every chunk before it were accepted; never rejects. */
  private async commitAfter(previous: Promise<void> | undefined, accepted: Promise<void>, lastOffset: string): Promise<void> {
    const { topic, partition } = this.deps;
    try {
      // Both awaited at once, so a rejection of `accepted` is handled while `previous` is pending.
      await Promise.all([previous, accepted]);
    } catch {
      // Revoked: the partition's new owner replays from the last commit.
      return;
    }
    if (this.revoked) return;
    // A failed commit only means a replay of rows already written, which their versions and uuids absorb.
    await this.deps.commit((BigInt(lastOffset) + 1n).toString()).catch((error: unknown) => this.deps.logger.warn({ err: error, topic, partition }, 'offset commit failed'));
    this.deps.logger.debug({ topic, partition, offset: lastOffset }, 'chunk ingested');
  }

  /** Runs `work` until it succeeds, waiting longer each time; stops trying once revoked. */
  private async untilDone<T>(what: string, work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await work();
      } catch (error) {
        await this.backoff(what, error, attempt);
      }
    }
  }

  /** Waits before the `attempt`-th retry, longer each time; throws `error` once revoked. */
  private async backoff(what: string, error: unknown, attempt: number): Promise<void> {
    if (this.revoked) throw error;
    const { first, max } = this.deps.retryDelayMs ?? { first: 200, max: 5_000 };
    const delay = Math.min(max, first * 2 ** (attempt - 1));
    this.deps.logger.warn({ err: error, topic: this.deps.topic, partition: this.deps.partition, retryInMs: delay }, `ingest ${what} failed; retrying`);
    await sleep(delay);
  }
}
