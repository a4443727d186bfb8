import { ControlPlaneStore, TokenResolver } from '@tributary/control-plane';
import { createRedis, type Redis } from '@tributary/redis';
import { createPool, createTestTenant, testConfig, type TestTenant } from '@tributary/test-support';

const config = testConfig();
const pool = createPool(config, { max: 2 });
// Postgres away: nothing listens on port 1, so every query fails to connect, as during a restart.
const awayPool = createPool({ databaseUrl: 'postgres://postgres@127.0.0.1:1/tributary' }, { max: 1 });
let redis: Redis;
let tenant: TestTenant;

beforeAll(async () => {
  redis = createRedis(config);
  tenant = await createTestTenant(pool, config);
});

afterAll(async () => {
  redis.disconnect();
  await pool.end();
  await awayPool.end();
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

/** A memo's life in these tests: long enough that two lookups in a row fall within it on a loaded machine. */
const MEMO_MS = 1_000;

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

  it('gives the answer it remembers without waiting, and nothing before it has one or once it expired', async () => {
    const resolver = new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis, 300, 10, MEMO_MS);
    expect(resolver.known(tenant.project.api_token)).toBeUndefined();
    expect(await resolver.resolve(tenant.project.api_token)).toEqual({ id: tenant.project.id });
    expect(resolver.known(tenant.project.api_token)).toEqual({ id: tenant.project.id });
    expect(await resolver.resolve('phc_unknown_token_for_known_test')).toBeNull();
    expect(resolver.known('phc_unknown_token_for_known_test')).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, MEMO_MS + 100));
    expect(resolver.known(tenant.project.api_token)).toBeUndefined();
  });

  it('remembers an unknown token only briefly, and a memo expires', async () => {
    const counting = countingRedis();
    const resolver = new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), counting.redis, 300, 10, MEMO_MS);
    expect(await resolver.resolve('phc_unknown_token_for_memo_test')).toBeNull();
    expect(await resolver.resolve('phc_unknown_token_for_memo_test')).toBeNull();
    expect(counting.gets()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, MEMO_MS + 100));
    expect(await resolver.resolve('phc_unknown_token_for_memo_test')).toBeNull();
    expect(counting.gets()).toBe(2);
  });

  it('while Postgres is away, resolves a known token from Redis after its entry went stale', async () => {
    const token = tenant.project.api_token;
    await new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis).invalidate(token);
    const fresh = new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis, 1, 10, 0);
    expect(await fresh.resolve(token)).toEqual({ id: tenant.project.id });
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const postgresAway = new TokenResolver(new ControlPlaneStore(awayPool, config.apiKeyPepper), redis, 1, 10, 0);
    expect(await postgresAway.resolve(token)).toEqual({ id: tenant.project.id });
    await expect(postgresAway.resolve('phc_never_seen_while_postgres_is_away')).rejects.toThrow();
  });

  it('while Postgres is away and Redis has lost the entry, resolves a token this process knew', async () => {
    const token = tenant.project.api_token;
    let away = false;
    const up = new ControlPlaneStore(pool, config.apiKeyPepper);
    const down = new ControlPlaneStore(awayPool, config.apiKeyPepper);
    const resolver = new TokenResolver({ findProjectByToken: (t) => (away ? down : up).findProjectByToken(t) }, redis, 300, 10, 20);
    expect(await resolver.resolve(token)).toEqual({ id: tenant.project.id });
    away = true;
    // Another resolver's invalidate drops the shared Redis entry, not this one's process memo.
    await new TokenResolver(up, redis).invalidate(token);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(await resolver.resolve(token)).toEqual({ id: tenant.project.id });
  });
});
