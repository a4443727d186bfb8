import type { Redis } from '@tributary/redis';

/**
 * Adds each key's count to its counter for this second and returns the 1-based positions of the
 * keys now over the limit. The expiry is set only by the increment that created the counter, so
 * a busy key costs one command, not two. One script call per request keeps the cost of spike
 * detection at one round trip whatever the number of distinct ids in a batch.
 */
const COUNT_SCRIPT = `
local limit = tonumber(ARGV[1])
local hot = {}
for i, key in ipairs(KEYS) do
  local added = tonumber(ARGV[i + 2])
  local count = redis.call('INCRBY', key, added)
  if count == added then redis.call('EXPIRE', key, ARGV[2]) end
  if count > limit then hot[#hot + 1] = i end
end
return hot
`;

type CountCommand = (numberOfKeys: number, ...keysThenArgs: (string | number)[]) => Promise<number[]>;

/**
 * Spike detection: counts events per `token:distinct_id` in one-second windows shared by every
 * capture replica through Redis. A distinct id over the rate has its events routed to the
 * overflow topic, so one hot user cannot delay everybody else's ingestion. When Redis is
 * unavailable nothing is rerouted: losing the counters must not lose or delay events.
 */
export class OverflowDetector {
  private readonly count: CountCommand;

  constructor(
    redis: Redis,
    private readonly eventsPerSecond: number,
    private readonly clock: () => number = Date.now,
  ) {
    // defineCommand sends EVALSHA and loads the script by itself when Redis does not know it yet.
    if (!('tributaryCaptureRate' in redis)) redis.defineCommand('tributaryCaptureRate', { lua: COUNT_SCRIPT });
    const command = (redis as unknown as { tributaryCaptureRate: CountCommand }).tributaryCaptureRate;
    this.count = command.bind(redis);
  }

  /** Returns the keys (`token:distinct_id`) whose count this second is over the limit. */
  async hotKeys(counts: ReadonlyMap<string, number>): Promise<Set<string>> {
    const hot = new Set<string>();
    if (counts.size === 0) return hot;
    const second = Math.floor(this.clock() / 1000);
    const keys = [...counts.keys()];
    // The hash tag puts one second's counters in one cluster slot, as a multi-key script needs.
    const redisKeys = keys.map((key) => `tributary:capture-rate:{${second}}:${key}`);
    const positions = await this.count(keys.length, ...redisKeys, this.eventsPerSecond, 2, ...keys.map((key) => counts.get(key)!)).catch(() => null);
    for (const position of positions ?? []) hot.add(keys[position - 1]!);
    return hot;
  }
}
