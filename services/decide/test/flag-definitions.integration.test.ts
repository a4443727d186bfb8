import { FLAGS_CHANGED_CHANNEL, FeatureFlagStore } from '@tributary/control-plane';
import { createLogger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import { createRedis } from '@tributary/redis';
import { createPool, createTestTenant, testConfig, waitFor } from '@tributary/test-support';
import { FlagDefinitions } from '../src/flag-definitions.js';

/**
 * A change announced while Postgres is away drops decide's definitions, and the reload fails:
 * decide answers with the definitions it had rather than a 503 (make chaos, Postgres restarted).
 */
const config = testConfig();
const logger = createLogger('flag-definitions-test', config.logLevel);
const pool = createPool(config, { max: 2 });
// Nothing listens on port 1: every query fails to connect, as while Postgres restarts.
const awayPool = createPool({ databaseUrl: 'postgres://postgres@127.0.0.1:1/tributary' }, { max: 1 });
const publisher = createRedis(config);

afterAll(async () => {
  await pool.end();
  await awayPool.end();
  publisher.disconnect();
});

test('a reload that fails after an announcement answers with the definitions loaded before', async () => {
  const tenant = await createTestTenant(pool, config);
  await new FeatureFlagStore(pool, publisher).create(tenant.project.id, { key: 'kept', name: 'kept', filters: { groups: [{ properties: [], rollout_percentage: 100 }] }, active: true, ensure_experience_continuity: false }, tenant.user.id);
  let away = false;
  const current = (): Pool => (away ? awayPool : pool);
  const lookups: boolean[] = [];
  const definitions = new FlagDefinitions({
    metrics: { evaluated: () => undefined, cacheLookup: (_cache, hit) => lookups.push(hit) },
    get pool() {
      return current();
    },
    get flags() {
      return new FeatureFlagStore(current(), publisher);
    },
    logger,
  });
  await definitions.subscribe(createRedis(config, { forQueues: true }));
  try {
    expect((await definitions.forProject(tenant.project.id)).flags.map((f) => f.key)).toEqual(['kept']);

    away = true;
    await publisher.publish(FLAGS_CHANGED_CHANNEL, String(tenant.project.id));
    // Once the announcement has dropped the entry, a lookup misses and must load, which fails.
    const afterDrop = await waitFor(
      async () => {
        lookups.length = 0;
        const answer = await definitions.forProject(tenant.project.id);
        return lookups[0] === false ? answer : undefined;
      },
      { what: 'a lookup after the announcement, answered', timeoutMs: 10_000 },
    );
    expect(afterDrop.flags.map((f) => f.key)).toEqual(['kept']);
    await expect(definitions.forProject(tenant.project.id + 1_000_000)).rejects.toThrow();
  } finally {
    await definitions.close();
  }
});

test('held definitions are given without waiting; before their first load and after an announcement, forProject must load them', async () => {
  const tenant = await createTestTenant(pool, config);
  await new FeatureFlagStore(pool, publisher).create(tenant.project.id, { key: 'held', name: 'held', filters: { groups: [{ properties: [], rollout_percentage: 100 }] }, active: true, ensure_experience_continuity: false }, tenant.user.id);
  const definitions = new FlagDefinitions({ pool, flags: new FeatureFlagStore(pool, publisher), logger });
  await definitions.subscribe(createRedis(config, { forQueues: true }));
  try {
    expect(definitions.loaded(tenant.project.id)).toBeUndefined();
    const loaded = await definitions.forProject(tenant.project.id);
    expect(definitions.loaded(tenant.project.id)).toBe(loaded);
    await publisher.publish(FLAGS_CHANGED_CHANNEL, String(tenant.project.id));
    await waitFor(async () => definitions.loaded(tenant.project.id) === undefined, { what: 'the held definitions dropped', timeoutMs: 10_000 });
    expect((await definitions.forProject(tenant.project.id)).flags.map((f) => f.key)).toEqual(['held']);
  } finally {
    await definitions.close();
  }
});

test('held definitions past their age are still given, while one reload replaces them', async () => {
  const tenant = await createTestTenant(pool, config);
  const flags = new FeatureFlagStore(pool, publisher);
  await flags.create(tenant.project.id, { key: 'first', name: 'first', filters: { groups: [] }, active: true, ensure_experience_continuity: false }, tenant.user.id);
  let now = 0;
  const definitions = new FlagDefinitions({ pool, flags, logger }, 1_000, () => now);
  const before = await definitions.forProject(tenant.project.id);
  await flags.create(tenant.project.id, { key: 'second', name: 'second', filters: { groups: [] }, active: true, ensure_experience_continuity: false }, tenant.user.id);
  now = 5_000;
  expect(definitions.loaded(tenant.project.id)).toBe(before);
  await waitFor(async () => definitions.loaded(tenant.project.id)?.flags.length === 2, { what: 'the reloaded definitions', timeoutMs: 10_000 });
});

test('the store that writes a flag announces it, so a write from outside the api reaches decide too', async () => {
  const tenant = await createTestTenant(pool, config);
  const flags = new FeatureFlagStore(pool, publisher);
  const created = await flags.create(tenant.project.id, { key: 'written', name: 'written', filters: { groups: [] }, active: true, ensure_experience_continuity: false }, tenant.user.id);
  const definitions = new FlagDefinitions({ pool, flags, logger });
  await definitions.subscribe(createRedis(config, { forQueues: true }));
  try {
    const dropped = async (write: () => Promise<unknown>) => {
      await definitions.forProject(tenant.project.id);
      await write();
      await waitFor(async () => definitions.loaded(tenant.project.id) === undefined, { what: 'the held definitions dropped', timeoutMs: 10_000 });
    };
    await dropped(() => flags.update(tenant.project.id, created.id, { active: false }));
    await dropped(() => flags.softDelete(tenant.project.id, created.id));
    await dropped(() => flags.create(tenant.project.id, { key: 'another', name: 'another', filters: { groups: [] }, active: true, ensure_experience_continuity: false }, tenant.user.id));
  } finally {
    await definitions.close();
  }
});
