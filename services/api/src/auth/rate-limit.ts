import type { RequestHandler } from 'express';
import type { Redis } from '@tributary/redis';
import { tooManyRequests } from '@tributary/http';
import { principalOf } from './authenticate.js';

/**
 * Per-key fixed one-minute windows in Redis, shared by every api replica. Redis being away
 * lets requests through: the limit protects the stores, it is not an access control.
 */
export function rateLimit(redis: Redis, perMinute: number, clock: () => number = Date.now): RequestHandler {
  return async (req, res, next) => {
    const now = clock();
    const window = Math.floor(now / 60_000);
    const key = `tributary:api-rate:${principalOf(req).key.id}:${window}`;
    const count = await redis
      .multi()
      .incr(key)
      .expire(key, 61)
      .exec()
      .then((results) => Number(results?.[0]?.[1] ?? 0))
      .catch(() => 0);
    res.set('X-RateLimit-Limit', String(perMinute));
    res.set('X-RateLimit-Remaining', String(Math.max(0, perMinute - count)));
    if (count > perMinute) {
      next(tooManyRequests(Math.max(1, Math.ceil(((window + 1) * 60_000 - now) / 1000))));
      return;
    }
    next();
  };
}
