import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';

const INVALIDATIONS = '__redis__:invalidate';

/** The keys of one command in flight: an invalidation of one of them before its reply makes that key's value unfit to keep. */
export interface TrackedRead {
  readonly keys: readonly string[];
  readonly generation: number;
  readonly spoiled: Set<string>;
}

export interface TrackedCopiesOptions {
  /** Most values kept; past it the least recently used go first. */
  maxEntries: number;
  /**
   * Longest a value is kept even when Redis says nothing: a bound on what a lapse in tracking
   * that no connection event revealed could cost.
   */
  maxAgeMs: number;
  onError?: (error: unknown) => void;
  /** Wait before trying again when a command that starts tracking failed (a timeout under load, say). */
  retryMs?: number;
}

/**
 * Values read from Redis kept in this process for as long as Redis promises to say when they
 * change: server-assisted client-side caching (CLIENT TRACKING, redirect mode, so it works over
 * RESP2). `reader` must read only keys whose copies are kept here, as Redis tracks every key it
 * reads. Invalidations arrive on a connection of their own, so they can overtake a read's reply:
 * a read spoiled by one in flight is answered but not kept. Any connection loss on either side
 * forgets everything, since invalidations sent meanwhile are lost; reads are kept again once
 * tracking is confirmed on the new connections.
 */
export class TrackedCopies<V extends object> {
  private readonly copies: LRUCache<string, V>;
  private readonly subscriber: Redis;
  private readonly reads = new Set<TrackedRead>();
  /** Bumped whenever tracking may have lapsed: a read begun in an older generation is never kept. */
  private generation = 0;
  private tracking = false;
  private subscriberId: number | undefined;
  private closed = false;
  private tracked: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly reader: Redis,
    private readonly options: TrackedCopiesOptions,
  ) {
    this.copies = new LRUCache({ max: options.maxEntries, ttl: options.maxAgeMs, ttlResolution: 1000 });
    // Subscribed by hand on every connect: its client id, which the reader's tracking names, changes with each connection.
    this.subscriber = reader.duplicate({ autoResubscribe: false });
    this.subscriber.on('messageBuffer', (channel: Buffer, keys: unknown) => {
      if (channel.toString() === INVALIDATIONS) this.invalidate(keys);
    });
    this.subscriber.on('close', () => {
      this.subscriberId = undefined;
      this.lapse();
    });
    this.subscriber.on('ready', () => void this.subscribe());
    this.reader.on('close', () => this.lapse());
    // The subscriber's first 'ready' starts tracking; this restarts it after the reader reconnects.
    this.reader.on('ready', () => void this.track());
  }

  /** Whether values read now will be kept. */
  get isTracking(): boolean {
    return this.tracking;
  }

  get(key: string): V | undefined {
    return this.tracking ? this.copies.get(key) : undefined;
  }

  /** Call before sending a read of `keys`; undefined when what it answers cannot be kept. */
  beginRead(keys: readonly string[]): TrackedRead | undefined {
    if (!this.tracking) return undefined;
    const read = { keys, generation: this.generation, spoiled: new Set<string>() };
    this.reads.add(read);
    return read;
  }

  /** Call with the read's reply, a value (or null, which is not kept) for each of its keys in order. */
  endRead(read: TrackedRead | undefined, values: readonly (V | null)[]): void {
    if (!read) return;
    this.reads.delete(read);
    if (read.generation !== this.generation) return;
    read.keys.forEach((key, i) => {
      const value = values[i];
      if (value && !read.spoiled.has(key)) this.copies.set(key, value);
    });
  }

  /** Call when a read failed. */
  abandonRead(read: TrackedRead | undefined): void {
    if (read) this.reads.delete(read);
  }

  /** Resolves once tracking is on (for tests and warm-up); it may lapse again later. */
  async untilTracking(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.tracking) {
      if (Date.now() > deadline) throw new Error('Redis client tracking did not start');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.lapse();
    this.subscriber.disconnect();
  }

  private invalidate(keys: unknown): void {
    // A null list means the whole database was flushed.
    if (!Array.isArray(keys)) {
      this.lapseCopies();
      return;
    }
    for (const raw of keys) {
      const key = String(raw);
      this.copies.delete(key);
      for (const read of this.reads) if (read.keys.includes(key)) read.spoiled.add(key);
    }
  }

  private lapse(): void {
    this.tracking = false;
    this.lapseCopies();
  }

  private lapseCopies(): void {
    this.generation += 1;
    this.copies.clear();
  }

  private async subscribe(): Promise<void> {
    try {
      const id = Number(await this.subscriber.client('ID'));
      await this.subscriber.subscribe(INVALIDATIONS);
      this.subscriberId = id;
    } catch (error) {
      this.failed(error);
      return;
    }
    await this.track();
  }

  /**
   * A failed start of tracking is tried again until it works or the connection it needed goes
   * (whose next 'ready' starts afresh): otherwise one slow reply would leave tracking off for
   * good, every read a round trip.
   */
  private failed(error: unknown): void {
    this.options.onError?.(error);
    if (this.closed) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.restart(), this.options.retryMs ?? 1_000);
    this.retry.unref();
  }

  /** A subscriber that failed half-way may be in subscribed mode without its id: it starts on a new connection. */
  private restart(): void {
    if (this.subscriberId !== undefined) void this.track();
    else this.subscriber.disconnect(true);
  }

  /**
   * Points the reader's tracking at the subscriber's current connection, once both are up. One at
   * a time, and nothing read before it is kept: turning tracking off forgets what it tracked.
   */
  private track(): Promise<void> {
    this.tracked = this.tracked.then(() => this.trackNow());
    return this.tracked;
  }

  private async trackNow(): Promise<void> {
    const id = this.subscriberId;
    if (this.closed || id === undefined || this.reader.status !== 'ready') return;
    this.lapse();
    const generation = this.generation;
    try {
      await this.reader.call('CLIENT', 'TRACKING', 'off');
      await this.reader.call('CLIENT', 'TRACKING', 'on', 'REDIRECT', String(id));
    } catch (error) {
      this.failed(error);
      return;
    }
    // A connection lost meanwhile makes this confirmation worthless; its 'ready' tries again.
    if (generation === this.generation && id === this.subscriberId) this.tracking = true;
  }
}
