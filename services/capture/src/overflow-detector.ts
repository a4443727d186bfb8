import type { Redis } from '@tributary/redis';

/**
 * Spike detection: counts events per `token:distinct_id` in one-second windows shared by every
 * capture replica through Redis. A distinct id over the rate has its events routed to the
 * overflow topic, so one hot user cannot delay everybody else's ingestion. When Redis is
 * unavailable nothing is rerouted: losing the counters must not lose or delay events.
 */
export class OverflowDetector {
  constructor(
    private readonly redis: Redis,
    private readonly eventsPerSecond: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Returns the keys (`token:distinct_id`) whose count this second is over the limit. */
  async hotKeys(counts: ReadonlyMap<string, number>): Promise<Set<string>> {
    const hot = new Set<string>();
    if (counts.size === 0) return hot;
    const second = Math.floor(this.clock() / 1000);
    const pipeline = this.redis.pipeline();
    const keys = [...counts.keys()];
    for (const key of keys) {
      const redisKey = `tributary:capture-rate:${second}:${key}`;
      pipeline.incrby(redisKey, counts.get(key)!);
      pipeline.expire(redisKey, 2);
    }
    const results = await pipeline.exec().catch(() => null);
    if (!results) return hot;
    keys.forEach((key, i) => {
      const [error, count] = results[i * 2] ?? [];
      if (!error && typeof count === 'number' && count > this.eventsPerSecond) hot.add(key);
    });
    return hot;
  }
}
