import type { Consumer, Kafka } from 'kafkajs';
import pLimit, { type LimitFunction } from 'p-limit';
import type { RenewingProducer, TopicNames } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import type { RowBuffer } from './clickhouse-rows.js';
import type { RefusedRow } from './clickhouse-writer.js';
import { sendDeadLetters, type DeadLetter } from './dead-letters.js';
import type { MessageProcessor } from './message-processor.js';
import { PartitionPipeline } from './partition-pipeline.js';

export interface IngestConsumerOptions {
  kafka: Kafka;
  topics: TopicNames;
  groupId: string;
  processor: MessageProcessor;
  /** Resolves once ClickHouse accepted the rows, with those it refused for their content and did not take (see RowWriter.write). */
  writeRows: (rows: RowBuffer) => Promise<readonly RefusedRow[]>;
  /**
   * Called when a chunk's rows were handed to `writeRows` and the process has nothing else to
   * do: no partition has events queued and no chunk is in processing. Rows then need not wait
   * for more to join them in an insert.
   */
  caughtUp?: () => void;
  producer: Pick<RenewingProducer, 'send'>;
  logger: Logger;
  /** Work that runs while the consumer does, such as the person outbox sweeper. */
  companions?: readonly { start(): void; stop(): Promise<void> }[];
  /**
   * Most events processed together. A person touched several times in a chunk is written once
   * (to Postgres, to ClickHouse's person table, to decide's cache), so a large chunk saves those
   * writes for every event that touches a person again; it is bounded so commits stay frequent
   * and memory small. Small chunks cost Postgres much more per event; beyond the default, memory
   * grows while throughput and CPU per event no longer improve. How large chunks really grow is
   * set by the queue share (see maxQueuedEvents).
   */
  chunkSize?: number;
  /**
   * Events the process may hold queued (see INGEST_MAX_QUEUED_EVENTS in @tributary/config for the
   * default and its reason), shared evenly by the partitions that have any queued or in hand (at
   * most a chunk each); a partition is paused once it holds its share. A chunk takes what is
   * queued, so the share and the fetch size below set how large chunks really are: a paused
   * partition holds up to its share plus one fetch. A second process takes half the partitions,
   * so each of its partitions gets twice the share and its chunks grow.
   */
  maxQueuedEvents: number;
  /** Chunks per partition processed ahead of their commit (see PartitionPipelineDeps.maxChunksAhead). */
  maxChunksAhead?: number;
  /** Chunks in processing at once across all partitions (INGEST_PARTITIONS_CONCURRENTLY). */
  processingConcurrency: number;
}

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * At-least-once delivery: each partition's messages go through a pipeline of their own (see
 * PartitionPipeline), which commits an offset only after ClickHouse accepted the rows before it
 * and Kafka the dead letters. Kafka's fetch loop only hands messages over, so it never waits for
 * the slowest partition; a partition whose pipeline is full is paused until it has room. A crash
 * anywhere before a commit replays those messages, which the uuid-keyed tables absorb.
 */
export class IngestConsumer {
  private readonly consumer: Consumer;
  private readonly pipelines = new Map<string, PartitionPipeline>();
  private readonly limit: LimitFunction;
  private readonly chunkSize: number;
  private running = false;
  private stopping = false;

  constructor(private readonly options: IngestConsumerOptions) {
    this.limit = pLimit(options.processingConcurrency);
    this.chunkSize = options.chunkSize ?? 7_500;
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      // A crashed process's partitions wait this long for another member: short, because the
      // fetch loop only hands messages over and so heartbeats every few hundred milliseconds.
      sessionTimeout: 10_000,
      heartbeatInterval: 3_000,
      // Compressed bytes: capture's LZ4 message sets hold about five times their size in events,
      // so this is about a thousand typical events per partition and fetch, and a few MB per
      // fetch once decompressed; larger fetches raise ingest's peak memory.
      // The pipelines copy what they queue, so a fetch's buffers are freed once handed over.
      // Small, so a partition stops filling close to its share of maxQueuedEvents.
      maxBytesPerPartition: 128 * 1024,
      maxBytes: 1024 * 1024,
      // kafkajs sleeps this long when every partition is paused, and a resumed partition waits it
      // out: short, so a pipeline that drained gets its next messages at once.
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
  }

  get isRunning(): boolean {
    return this.running;
  }

  async start(): Promise<void> {
    const { topics, logger } = this.options;
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [topics.realtime, topics.historical, topics.overflow], fromBeginning: true });
    this.consumer.on(this.consumer.events.CRASH, (event) => {
      logger.error({ err: event.payload.error, restart: event.payload.restart }, 'ingest consumer crashed');
      if (!event.payload.restart) this.running = false;
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, (event) => {
      const assigned = new Set(Object.entries(event.payload.memberAssignment).flatMap(([topic, partitions]) => partitions.map((p) => key(topic, p))));
      for (const [k, pipeline] of this.pipelines) {
        if (assigned.has(k)) continue;
        pipeline.revoke();
        this.pipelines.delete(k);
      }
      logger.info({ partitions: assigned.size }, 'ingest joined its consumer group');
    });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, pause }) => {
        // While stopping, what was not taken yet is left to be fetched again after the restart.
        if (this.stopping || batch.messages.length === 0) return;
        const hasRoom = this.pipelineFor(batch.topic, batch.partition).enqueue(batch.messages);
        // Resolving moves the fetch position on; the pipeline commits once the rows are written.
        resolveOffset(batch.lastOffset());
        if (!hasRoom) pause();
      },
    });
    for (const companion of this.options.companions ?? []) companion.start();
    this.running = true;
  }

  private pipelineFor(topic: string, partition: number): PartitionPipeline {
    const k = key(topic, partition);
    let pipeline = this.pipelines.get(k);
    if (!pipeline) {
      pipeline = new PartitionPipeline({
        topic,
        partition,
        processor: this.options.processor,
        writeRows: (rows) => {
          // writeRows takes the rows synchronously (RowWriter queues them before its first await),
          // so a caught-up consumer's last rows are already waiting when it says so.
          const written = this.options.writeRows(rows);
          if (this.isCaughtUp()) this.options.caughtUp?.();
          return written;
        },
        sendDeadLetters: (t, p, deadLetters) => this.sendDeadLetters(t, p, deadLetters),
        commit: (offset) => this.consumer.commitOffsets([{ topic, partition, offset }]),
        resume: () => this.consumer.resume([{ topic, partitions: [partition] }]),
        logger: this.options.logger,
        limit: (work) => this.limit(work),
        chunkSize: this.chunkSize,
        maxQueued: () => this.queueShare(),
        // Enough for a partition to go on while the insert its earlier chunks joined is in flight.
        // While ClickHouse keeps up, RowWriter's insert size rather than this bounds the rows
        // waiting in memory, so five cost no more memory than three and let two processes go
        // faster. When it does not keep up, each partition stops at this many chunks.
        maxChunksAhead: this.options.maxChunksAhead ?? 5,
      });
      this.pipelines.set(k, pipeline);
    }
    return pipeline;
  }

  private isCaughtUp(): boolean {
    // p-limit counts a chunk out once its work settled, before the pipeline that awaited it goes on to write its rows.
    if (this.limit.activeCount > 0) return false;
    for (const pipeline of this.pipelines.values()) if (pipeline.queued > 0) return false;
    return true;
  }

  /**
   * Each busy partition's share of maxQueuedEvents: partitions with nothing to do, as those of a
   * quiet topic, take none. At least one event, as a paused partition resumes once it holds less
   * than half its share: with a share of none it never would.
   */
  private queueShare(): number {
    let busy = 0;
    for (const pipeline of this.pipelines.values()) if (!pipeline.idle) busy++;
    return Math.max(1, Math.min(this.chunkSize, Math.floor(this.options.maxQueuedEvents / Math.max(1, busy))));
  }

  private async sendDeadLetters(topic: string, partition: number, deadLetters: DeadLetter[]): Promise<void> {
    await sendDeadLetters(this.options.producer, this.options.topics.deadLetter, deadLetters, { topic, partition });
    for (const { message, reason, refusedRow } of deadLetters) {
      this.options.logger.warn({ topic, partition, offset: message.offset, reason, table: refusedRow?.table }, refusedRow ? 'row ClickHouse refused sent to the dead-letter topic' : 'message sent to the dead-letter topic');
    }
  }

  /** Takes nothing more, writes and commits everything already taken, then leaves the group. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.pipelines.values()].map((p) => p.settled()));
    await Promise.all((this.options.companions ?? []).map((companion) => companion.stop()));
    this.running = false;
    await this.consumer.disconnect();
  }
}
