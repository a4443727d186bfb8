import { performance } from 'node:perf_hooks';
import type { Redis } from '@tributary/redis';

/**
 * Adds each key's count to its field of this second's hash and returns the 1-based positions of
 * the keys now over the limit. The keys and counts come as one argument, `<bytes> <key><count>\n`
 * per key (a distinct id may hold any character, so each key is length-prefixed): one argument
 * instead of two per key is what makes a call cheap to build and send, for the client and Redis.
 */
const COUNT_SCRIPT = `
local limit = tonumber(ARGV[1])
local counts = ARGV[3]
local hot = {}
local at = 1
local position = 0
while at <= #counts do
  local space = string.find(counts, ' ', at, true)
  local keyEnd = space + tonumber(string.sub(counts, at, space - 1))
  local newline = string.find(counts, '\\n', keyEnd + 1, true)
  local added = tonumber(string.sub(counts, keyEnd + 1, newline - 1))
  position = position + 1
  if redis.call('HINCRBY', KEYS[1], string.sub(counts, space + 1, keyEnd), added) > limit then hot[#hot + 1] = position end
  at = newline + 1
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return hot
`;

type CountCommand = (numberOfKeys: number, key: string, limit: number, ttlSeconds: number, counts: string) => Promise<number[]>;

export interface OverflowDetectorOptions {
  /** Wall-clock milliseconds, which choose the second counted in. */
  clock?: () => number;
  /**
   * Least time between two syncs with Redis. Counts made meanwhile go together in the next
   * sync, so a busy replica makes a few calls a second rather than one per request; another
   * replica's share of a distinct id's rate is learnt at most this much (and a round trip) late.
   */
  syncIntervalMs?: number;
  /** The most keys one script call counts; a sync with more makes several calls. */
  maxKeysPerCall?: number;
}

/**
 * Spike detection: counts events per `token:distinct_id` in one-second windows. A distinct id
 * over the rate has its events routed to the overflow topic, so one hot user cannot delay
 * everybody else's ingestion.
 *
 * Requests never wait for Redis. Each replica counts in memory, and a key is hot as soon as its
 * own count this second is over the limit, or when Redis last said that the count of every
 * replica together is. The counts are added to Redis's shared hash in the background, one call
 * per sync interval, carrying every key counted since the last one. Waiting for a Redis round
 * trip on every request would cost capture much of its CPU per event, between writing the call,
 * Redis running it on the same cores and the wake-ups, for a decision that is approximate anyway. When Redis is away each replica still
 * catches what it sees alone; losing the counters never loses or delays events.
 *
 * A key found over the limit stays hot through the next second as well: a new second starts
 * with no shared counts, and without that a hot key's first events of every second would go to
 * the realtime topic at each replica until its first sync of the second.
 */
export class OverflowDetector {
  private readonly count: CountCommand;
  private readonly clock: () => number;
  private readonly syncIntervalMs: number;
  private readonly maxKeysPerCall: number;
  private second = Number.NaN;
  /** This replica's count of each key this second. */
  private readonly own = new Map<string, number>();
  /** Counts of this second not yet added to Redis. */
  private unsynced = new Map<string, number>();
  /** Keys found over the limit this second: by this replica's counts, or Redis's for all of them. */
  private over = new Set<string>();
  /** Keys found over the limit in the second before. */
  private overBefore = new Set<string>();
  private syncing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastSyncAt = Number.NEGATIVE_INFINITY;

  constructor(
    redis: Redis,
    private readonly eventsPerSecond: number,
    options: OverflowDetectorOptions = {},
  ) {
    // defineCommand sends EVALSHA and loads the script by itself when Redis does not know it yet.
    if (!('tributaryCaptureRateHash' in redis)) redis.defineCommand('tributaryCaptureRateHash', { lua: COUNT_SCRIPT });
    const command = (redis as unknown as { tributaryCaptureRateHash: CountCommand }).tributaryCaptureRateHash;
    this.count = command.bind(redis);
    this.clock = options.clock ?? Date.now;
    this.syncIntervalMs = options.syncIntervalMs ?? 50;
    this.maxKeysPerCall = options.maxKeysPerCall ?? 10_000;
  }

  /** Counts a request's events per key (`token:distinct_id`) and returns the keys over the limit this second. */
  hotKeys(counts: ReadonlyMap<string, number>): Set<string> {
    const hot = new Set<string>();
    if (counts.size === 0) return hot;
    this.enterSecond(Math.floor(this.clock() / 1000));
    for (const [key, count] of counts) {
      const own = (this.own.get(key) ?? 0) + count;
      this.own.set(key, own);
      this.unsynced.set(key, (this.unsynced.get(key) ?? 0) + count);
      if (own > this.eventsPerSecond) this.over.add(key);
      if (this.over.has(key) || this.overBefore.has(key)) hot.add(key);
    }
    this.scheduleSync();
    return hot;
  }

  /** Adds every count not yet in Redis now (after the sync in flight, if any); for shutdown and tests. */
  async sync(): Promise<void> {
    while (this.syncing) await this.syncing;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.unsynced.size > 0) await this.runSync();
  }

  private enterSecond(second: number): void {
    if (second === this.second) return;
    // A past second's counts decide nothing any more, here or at another replica.
    this.overBefore = second === this.second + 1 ? this.over : new Set();
    this.over = new Set();
    this.second = second;
    this.own.clear();
    this.unsynced.clear();
  }

  private scheduleSync(): void {
    if (this.syncing || this.timer) return;
    const wait = Math.max(0, this.lastSyncAt + this.syncIntervalMs - performance.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      // A sync() call may have started one meanwhile; its end schedules the next.
      if (!this.syncing) void this.runSync();
    }, wait);
    this.timer.unref();
  }

  private runSync(): Promise<void> {
    const second = this.second;
    const counts = this.unsynced;
    this.unsynced = new Map();
    this.lastSyncAt = performance.now();
    this.syncing = this.addToRedis(second, counts)
      .catch(() => undefined)
      .finally(() => {
        this.syncing = null;
        if (this.unsynced.size > 0) this.scheduleSync();
      });
    return this.syncing;
  }

  private async addToRedis(second: number, counts: ReadonlyMap<string, number>): Promise<void> {
    const keys = [...counts.keys()];
    for (let start = 0; start < keys.length; start += this.maxKeysPerCall) {
      const part = keys.slice(start, start + this.maxKeysPerCall);
      let argument = '';
      for (const key of part) argument += `${Buffer.byteLength(key)} ${key}${counts.get(key)!}\n`;
      const positions = await this.count(1, `tributary:capture-rate:${second}`, this.eventsPerSecond, 2, argument);
      // The second may have turned meanwhile: what was over in the one before still counts.
      const over = second === this.second ? this.over : second === this.second - 1 ? this.overBefore : null;
      if (!over) return;
      for (const position of positions) over.add(part[position - 1]!);
    }
  }
}
