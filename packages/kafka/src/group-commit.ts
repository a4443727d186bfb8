import type { Message, TopicMessages } from 'kafkajs';

interface Waiting<T> {
  item: T;
  bytes: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Bytes of keys and values: what a produce request mostly carries. */
export function sizeOfTopicMessages(topicMessages: readonly TopicMessages[]): number {
  let bytes = 0;
  for (const { messages } of topicMessages) {
    for (const m of messages) bytes += (m.value?.length ?? 0) + (m.key?.length ?? 0);
  }
  return bytes;
}

/** Joins several requests' messages into one list per topic, keeping each topic's arrival order. */
export function mergeTopicMessages(parts: readonly (readonly TopicMessages[])[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const part of parts) {
    for (const { topic, messages } of part) {
      const list = byTopic.get(topic) ?? [];
      list.push(...messages);
      byTopic.set(topic, list);
    }
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

export interface GroupCommitOptions {
  /** A send carries at least one caller's items, and more only while under this size (default 4 MiB). */
  maxSendBytes?: number;
  /**
   * Least time from one send's start to the next one's: items arriving meanwhile wait and go
   * together, unless `waitOnlyUnderBytes` of them wait, which then go at once: the interval keeps
   * sends few, and a full one is as large as sends get. 0, the default, sends as soon as the
   * previous send is done.
   */
  minIntervalMs?: number;
  /**
   * The interval is waited out only while fewer bytes than this wait: small items (single
   * events) gain most from going together, while items this large already make sends large
   * enough and would only be delayed. Defaults to `maxSendBytes`.
   */
  waitOnlyUnderBytes?: number;
  /**
   * Least time from one send's start to the next one's once the caller said that nothing more is
   * coming soon (see `quiet`): the interval is there to gather items, and then none would come.
   * Defaults to `minIntervalMs`.
   */
  quietIntervalMs?: number;
}

/**
 * Group commit for a store that does best with few, large writes, one at a time: an idempotent
 * Kafka producer (kafkajs lets it have one produce request in flight per broker) or a ClickHouse
 * table (every insert makes a part). Whatever arrives while a send is in flight waits and goes
 * out together in the next send, and every caller learns the outcome of the send that carried
 * its items. Sends run one after another, so arrival order is kept.
 */
export class GroupCommit<T> {
  private waiting: Waiting<T>[] = [];
  private waitingBytes = 0;
  private draining = false;
  private lastSendAt = Number.NEGATIVE_INFINITY;
  /** Ends the wait for the interval early; set while the next send waits it out. */
  private sendNow: (() => void) | null = null;
  /** Said by `quiet`, unsaid by the next submission. */
  private isQuiet = false;

  private readonly maxSendBytes: number;
  private readonly minIntervalMs: number;
  private readonly waitOnlyUnderBytes: number;
  private readonly quietIntervalMs: number;

  constructor(
    private readonly send: (items: T[]) => Promise<unknown>,
    private readonly sizeOf: (item: T) => number,
    options: GroupCommitOptions = {},
  ) {
    this.maxSendBytes = options.maxSendBytes ?? 4 * 1024 * 1024;
    this.minIntervalMs = options.minIntervalMs ?? 0;
    this.waitOnlyUnderBytes = options.waitOnlyUnderBytes ?? this.maxSendBytes;
    this.quietIntervalMs = Math.min(options.quietIntervalMs ?? this.minIntervalMs, this.minIntervalMs);
  }

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const bytes = this.sizeOf(item);
      this.waiting.push({ item, bytes, resolve, reject });
      this.waitingBytes += bytes;
      this.isQuiet = false;
      if (!this.draining) void this.drain();
      else if (this.sendNow && this.waitingBytes >= this.waitOnlyUnderBytes) this.sendNow();
    });
  }

  /**
   * Says that no more items are coming soon (a consumer that has caught up with its topic):
   * what waits goes once `quietIntervalMs` has passed since the last send started, rather than
   * the whole `minIntervalMs`. Holds until the next submission.
   */
  quiet(): void {
    this.isQuiet = true;
    this.sendNow?.();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.waiting.length > 0) {
        // Asked again after each wait: `quiet` may have shortened the interval meanwhile.
        for (let wait = this.untilIntervalOver(); wait > 0; wait = this.untilIntervalOver()) await this.intervalOver(wait);
        this.lastSendAt = Date.now();
        const group = this.takeGroup();
        try {
          await this.send(group.map((w) => w.item));
          for (const w of group) w.resolve();
        } catch (error) {
          for (const w of group) w.reject(error);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Milliseconds the next send should still wait; none once what waits fills a send. */
  private untilIntervalOver(): number {
    if (this.waitingBytes >= this.waitOnlyUnderBytes) return 0;
    return this.lastSendAt + (this.isQuiet ? this.quietIntervalMs : this.minIntervalMs) - Date.now();
  }

  /** Resolves after `wait` ms, or sooner once a full send is waiting or the caller says it is quiet. */
  private async intervalOver(wait: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait);
      this.sendNow = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.sendNow = null;
  }

  private takeGroup(): Waiting<T>[] {
    let bytes = 0;
    let count = 0;
    for (const w of this.waiting) {
      if (count > 0 && bytes + w.bytes > this.maxSendBytes) break;
      bytes += w.bytes;
      count++;
    }
    this.waitingBytes -= bytes;
    return this.waiting.splice(0, count);
  }
}
