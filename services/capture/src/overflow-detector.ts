import { GroupCommit } from '@tributary/kafka';
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

/** One request's counts, and the keys of it that the call carrying it found over the limit. */
interface Counting {
  counts: ReadonlyMap<string, number>;
  hot: Set<string>;
}

/**
 * Spike detection: counts events per `token:distinct_id` in one-second windows shared by every
 * capture replica through Redis. A distinct id over the rate has its events routed to the
 * overflow topic, so one hot user cannot delay everybody else's ingestion. When Redis is
 * unavailable nothing is rerouted: losing the counters must not lose or delay events.
 *
 * One script call counts a whole request, whatever the number of distinct ids in it, and
 * requests that arrive while a call is in flight share the next one (group commit): under load
 * a call counts many requests, so the cost of detection per request is a fraction of a round trip.
 */
export class OverflowDetector {
  private readonly count: CountCommand;
  private readonly calls: GroupCommit<Counting>;

  constructor(
    redis: Redis,
    private readonly eventsPerSecond: number,
    private readonly clock: () => number = Date.now,
    /** The most keys one call counts; a request with more goes alone. */
    maxKeysPerCall = 10_000,
  ) {
    // defineCommand sends EVALSHA and loads the script by itself when Redis does not know it yet.
    if (!('tributaryCaptureRateHash' in redis)) redis.defineCommand('tributaryCaptureRateHash', { lua: COUNT_SCRIPT });
    const command = (redis as unknown as { tributaryCaptureRateHash: CountCommand }).tributaryCaptureRateHash;
    this.count = command.bind(redis);
    this.calls = new GroupCommit<Counting>((countings) => this.countAll(countings), (counting) => counting.counts.size, maxKeysPerCall);
  }

  /** Returns the keys (`token:distinct_id`) whose count this second is over the limit. */
  async hotKeys(counts: ReadonlyMap<string, number>): Promise<Set<string>> {
    const counting: Counting = { counts, hot: new Set() };
    if (counts.size === 0) return counting.hot;
    await this.calls.submit(counting).catch(() => undefined);
    return counting.hot;
  }

  private async countAll(countings: readonly Counting[]): Promise<void> {
    const total = new Map<string, number>();
    for (const { counts } of countings) for (const [key, count] of counts) total.set(key, (total.get(key) ?? 0) + count);
    const keys = [...total.keys()];
    let argument = '';
    for (const key of keys) argument += `${Buffer.byteLength(key)} ${key}${total.get(key)!}\n`;
    const second = Math.floor(this.clock() / 1000);
    const positions = await this.count(1, `tributary:capture-rate:${second}`, this.eventsPerSecond, 2, argument);
    const hot = new Set(positions.map((position) => keys[position - 1]!));
    for (const counting of countings) for (const key of counting.counts.keys()) if (hot.has(key)) counting.hot.add(key);
  }
}
