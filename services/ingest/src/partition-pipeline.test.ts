import type { KafkaMessage } from 'kafkajs';
import { encodeCaptureEvents, encodeCaptureMessage, type CaptureMessage } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import pLimit from 'p-limit';
import type { RowBuffer } from './clickhouse-rows.js';
import type { RefusedRow } from './clickhouse-writer.js';
import type { DeadLetter } from './dead-letters.js';
import { PartitionPipeline } from './partition-pipeline.js';

const event = (i: number): CaptureMessage => ({
  uuid: `0190f3c0-0000-7000-8000-${String(i).padStart(12, '0')}`,
  distinct_id: `user-${i}`,
  ip: null,
  data: JSON.stringify({ event: 'e', properties: { i } }),
  now: '2026-01-01T00:00:00.000Z',
  sent_at: null,
  token: 'phc_test',
  historical_migration: false,
});

let nextEvent = 0;
/** A message at `offset` carrying `events` events: several-event form, or one-event form for one. */
function message(offset: number, events: number): KafkaMessage {
  const carried = Array.from({ length: events }, () => event(nextEvent++));
  const value = events === 1 ? encodeCaptureMessage(carried[0]!) : encodeCaptureEvents(carried)[0]!;
  return { key: null, value: Buffer.from(value), offset: String(offset), timestamp: '0', attributes: 0, headers: {} };
}

interface Options {
  chunkSize: number;
  maxQueued: number | (() => number);
  maxChunksAhead?: number;
  limit?: <T>(work: () => Promise<T>) => Promise<T>;
  partition?: number;
  writeRows?: (rows: RowBuffer) => Promise<readonly RefusedRow[]>;
  /** Stands in for the processor's work on a chunk (after it is recorded): throw to fail it. */
  process?: (offsets: string[]) => void;
}

function pipeline(options: Options) {
  const chunks: string[][] = [];
  const commits: string[] = [];
  const sent: (DeadLetter & { topic: string; partition: number; committedBefore: string[] })[] = [];
  let resumed = 0;
  let release: () => void = () => undefined;
  let held = Promise.resolve();
  const p = new PartitionPipeline({
    topic: 't',
    partition: options.partition ?? 0,
    limit: options.limit ?? ((work) => work()),
    processor: {
      async processBatch(messages) {
        chunks.push(messages.map((m) => m.offset));
        await held;
        options.process?.(messages.map((m) => m.offset));
      },
    },
    writeRows: options.writeRows ?? (async () => []),
    sendDeadLetters: async (topic, partition, letters) => void sent.push(...letters.map((letter) => ({ ...letter, topic, partition, committedBefore: [...commits] }))),
    commit: async (offset) => void commits.push(offset),
    resume: () => void (resumed += 1),
    logger: createLogger('pipeline-test', 'silent'),
    chunkSize: options.chunkSize,
    maxQueued: typeof options.maxQueued === 'number' ? () => options.maxQueued as number : options.maxQueued,
    maxChunksAhead: options.maxChunksAhead ?? 2,
    retryDelayMs: { first: 1, max: 4 },
  });
  return {
    p,
    chunks,
    commits,
    sent,
    resumed: () => resumed,
    hold: () => (held = new Promise((resolve) => (release = () => resolve()))),
    release: () => release(),
  };
}

describe('partition pipeline', () => {
  it('cuts chunks by events, never inside a message, and commits each chunk after its last message', async () => {
    const t = pipeline({ chunkSize: 10, maxQueued: 1_000 });
    t.hold();
    t.p.enqueue([message(0, 1)]);
    t.p.enqueue([message(1, 4), message(2, 5), message(3, 3), message(4, 25), message(5, 1), message(6, 9)]);
    t.release();
    await t.p.settled();
    // 4+5 fit in ten, 3 would not; a message of 25 is a chunk of its own.
    expect(t.chunks).toEqual([['0'], ['1', '2'], ['3'], ['4'], ['5', '6']]);
    expect(t.commits).toEqual(['1', '3', '4', '5', '7']);
  });

  it('counts queued events, not messages, to pause the partition, and resumes it once half has drained', async () => {
    const t = pipeline({ chunkSize: 10, maxQueued: 40 });
    t.hold();
    expect(t.p.enqueue([message(0, 1)])).toBe(true);
    expect(t.p.enqueue([message(1, 20), message(2, 10)])).toBe(true);
    expect(t.p.enqueue([message(3, 10)])).toBe(false);
    expect(t.resumed()).toBe(0);
    t.release();
    await t.p.settled();
    expect(t.resumed()).toBe(1);
    expect(t.commits.at(-1)).toBe('4');
  });

  it('pauses at the share of queued events it is given at each batch, which changes with the partitions that share the process', async () => {
    let share = 40;
    const t = pipeline({ chunkSize: 10, maxQueued: () => share });
    t.hold();
    expect(t.p.enqueue([message(0, 1), message(1, 20)])).toBe(true);
    // Another partition got busy: the share halves, and what is queued is already too much.
    share = 20;
    expect(t.p.enqueue([message(2, 5)])).toBe(false);
    // It went quiet again: the doubled share leaves room.
    share = 40;
    expect(t.p.enqueue([message(3, 5)])).toBe(true);
    t.release();
    await t.p.settled();
    expect(t.commits.at(-1)).toBe('4');
  });

  it('processes as many chunks at once as the shared limit allows, and takes a chunk only when it may start', async () => {
    const limit = pLimit(1);
    const a = pipeline({ chunkSize: 100, maxQueued: 1_000, limit, partition: 0 });
    const b = pipeline({ chunkSize: 100, maxQueued: 1_000, limit, partition: 1 });
    a.hold();
    b.hold();
    a.p.enqueue([message(0, 1)]);
    b.p.enqueue([message(0, 1)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect([a.chunks.length, b.chunks.length]).toEqual([1, 0]);
    // Arrives while b waits for room: joins b's first chunk instead of making a second one.
    b.p.enqueue([message(1, 1)]);
    a.release();
    await a.p.settled();
    await new Promise((resolve) => setImmediate(resolve));
    expect(b.chunks).toEqual([['0', '1']]);
    b.release();
    await b.p.settled();
    expect(b.commits).toEqual(['2']);
  });

  it('goes on processing while earlier chunks wait for their insert, at most maxChunksAhead of them, and commits in order', async () => {
    // Inserts finish only when the test says so, the latest first.
    const inserts: (() => void)[] = [];
    const t = pipeline({ chunkSize: 1, maxQueued: 1_000, maxChunksAhead: 3, writeRows: () => new Promise((resolve) => inserts.push(() => resolve([]))) });
    t.p.enqueue([message(0, 1), message(1, 1), message(2, 1), message(3, 1), message(4, 1)]);
    const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
    await settle();
    // Three chunks processed and waiting for their inserts; the fourth waits for room.
    expect(t.chunks).toEqual([['0'], ['1'], ['2']]);
    inserts[2]!();
    inserts[1]!();
    await settle();
    expect(t.commits).toEqual([]);
    expect(t.chunks).toHaveLength(3);
    inserts[0]!();
    await settle();
    expect(t.commits).toEqual(['1', '2', '3']);
    expect(t.chunks).toEqual([['0'], ['1'], ['2'], ['3'], ['4']]);
    inserts[4]!();
    await settle();
    expect(t.commits).toEqual(['1', '2', '3']);
    inserts[3]!();
    await t.p.settled();
    expect(t.commits).toEqual(['1', '2', '3', '4', '5']);
  });

  it('sends the rows ClickHouse refused for their content to the dead-letter topic, with their table and chunk, before it commits past them', async () => {
    const line = Buffer.from('row\tClickHouse\trefused\n');
    let writes = 0;
    const t = pipeline({
      chunkSize: 10,
      maxQueued: 1_000,
      partition: 3,
      // The first write fails as a store that is away does; the one after it leaves the row out.
      writeRows: async () => {
        writes += 1;
        if (writes === 1) throw new Error('connect ECONNREFUSED 127.0.0.1:8123');
        return [{ table: 'events', line, reason: 'Code: 395, e.displayText() = DB::Exception: refused' }];
      },
    });
    t.p.enqueue([message(7, 2), message(8, 3)]);
    await t.p.settled();
    expect(t.sent).toEqual([
      {
        topic: 't',
        partition: 3,
        message: { key: null, value: line, offset: '7' },
        reason: 'ClickHouse refused the row: Code: 395, e.displayText() = DB::Exception: refused',
        refusedRow: { table: 'events', lastOffset: '8' },
        committedBefore: [],
      },
    ]);
    expect(t.commits).toEqual(['9']);
  });

  it('splits a chunk that fails for its content until the message at fault is alone, dead-letters it with the error and ingests the others', async () => {
    const t = pipeline({
      chunkSize: 100,
      maxQueued: 1_000,
      process: (offsets) => {
        if (offsets.includes('12')) throw new TypeError("Cannot read properties of undefined (reading 'x')");
      },
    });
    const poison = message(12, 1);
    t.p.enqueue([message(10, 1), message(11, 1), poison, message(13, 1), message(14, 1)]);
    await t.p.settled();
    expect(t.sent).toEqual([
      { topic: 't', partition: 0, message: { key: null, value: poison.value, offset: '12' }, reason: "ingest failed on this message: Cannot read properties of undefined (reading 'x')", committedBefore: [] },
    ]);
    // Every other message was processed in a chunk without the poison one.
    const processed = new Set(t.chunks.filter((chunk) => !chunk.includes('12')).flat());
    expect([...processed].sort()).toEqual(['10', '11', '13', '14']);
    // Alone, the message at fault was tried three times before it was set apart.
    expect(t.chunks.filter((chunk) => chunk.length === 1 && chunk[0] === '12')).toHaveLength(3);
    expect(t.commits).toEqual(['15']);
  });

  it('does not split a chunk while a store is away, nor dead-letter a message whose failure passes', async () => {
    const failures = [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), new Error('a passing fault'), new Error('a passing fault')];
    const t = pipeline({
      chunkSize: 100,
      maxQueued: 1_000,
      process: () => {
        const failure = failures.shift();
        if (failure) throw failure;
      },
    });
    t.p.enqueue([message(20, 1), message(21, 1)]);
    await t.p.settled();
    expect(t.sent).toEqual([]);
    // Away, the chunk is tried again whole; then it fails for itself and is split; its first half passes on a retry.
    expect(t.chunks).toEqual([['20', '21'], ['20', '21'], ['20'], ['20'], ['21']]);
    expect(t.commits).toEqual(['22']);
  });
});
