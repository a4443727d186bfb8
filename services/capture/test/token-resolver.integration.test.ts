import { ControlPlaneStore, TokenResolver } from '@tributary/control-plane';
import { createRedis, type Redis } from '@tributary/redis';
import { createPool, createTestTenant, testConfig, type TestTenant } from '@tributary/test-support';

const config = testConfig();
const pool = createPool(config, { max: 2 });
let redis: Redis;
let tenant: TestTenant;

beforeAll(async () => {
  redis = createRedis(config);
  tenant = await createTestTenant(pool, config);
});

afterAll(async () => {
  redis.disconnect();
  await pool.end();
});

/** Counts the Redis reads the resolver makes, passing everything else through to the real Redis. */
function countingRedis(): { redis: Redis; gets: () => number } {
  let gets = 0;
  const proxy = new Proxy(redis, {
    get(target, property, receiver) {
      if (property === 'get') {
        return (...args: Parameters<Redis['get']>) => {
          gets += 1;
          return target.get(...args);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { redis: proxy, gets: () => gets };
}

describe('token resolver', () => {
  it('answers repeated lookups of a token from the process memo, and asks again after invalidate', async () => {
    const counting = countingRedis();
    const resolver = new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), counting.redis);
    for (let i = 0; i < 50; i++) expect(await resolver.resolve(tenant.project.api_token)).toEqual({ id: tenant.project.id });
    expect(counting.gets()).toBe(1);
    await resolver.invalidate(tenant.project.api_token);
    expect(await resolver.resolve(tenant.project.api_token)).toEqual({ id: tenant.project.id });
    expect(counting.gets()).toBe(2);
  });

  it('remembers an unknown token only briefly, and a memo expires', async () => {
    const counting = countingRedis();
    const resolver = new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), counting.redis, 300, 10, 50);
    expect(await resolver.resolve('phc_unknown_token_for_memo_test')).toBeNull();
    expect(await resolver.resolve('phc_unknown_token_for_memo_test')).toBeNull();
    expect(counting.gets()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await resolver.resolve('phc_unknown_token_for_memo_test')).toBeNull();
    expect(counting.gets()).toBe(2);
  });
});
