import { migrateClickHouse } from '@tributary/clickhouse';
import { createLogger } from '@tributary/logger';
import { migratePostgres, type Pool } from '@tributary/postgres';
import { testConfig, uniqueName, waitFor } from '@tributary/test-support';
import { dropIsolatedStores, isolatedStores } from '../../api/test/isolated-stores.js';
import { DefinitionsRecorder } from '../src/definitions/definitions-recorder.js';
import { DefinitionsWriter } from '../src/definitions/definitions-writer.js';
import type { IngestConsumer } from '../src/ingest-consumer.js';
import { startIngestHarness, type IngestHarness } from './ingest-harness.js';

/** Stores of the file's own, migrated with the definitions tables (migration 0016). */
const stores = isolatedStores(uniqueName('definitions'));
const config = testConfig(stores);
const logger = createLogger('definitions-test', config.logLevel);

let h: IngestHarness;
let consumer: IngestConsumer;

beforeAll(async () => {
  await migratePostgres(config);
  await migrateClickHouse(config);
  h = await startIngestHarness(stores);
  consumer = await h.startConsumer();
}, 90_000);

afterAll(async () => {
  await h?.close();
  await dropIsolatedStores(config);
});

const eventDefinitions = async (pool: Pool, teamId: number) =>
  (await pool.query<{ name: string; last_seen_at: Date | null }>('SELECT name, last_seen_at FROM event_definitions WHERE team_id = $1 ORDER BY name', [teamId])).rows;

const propertyDefinitions = async (pool: Pool, teamId: number) =>
  (
    await pool.query<{ name: string; type: number; group_type_index: number | null; property_type: string | null; is_numerical: boolean }>(
      'SELECT name, type, group_type_index, property_type, is_numerical FROM property_definitions WHERE team_id = $1 ORDER BY type, name',
      [teamId],
    )
  ).rows;

const eventProperties = async (pool: Pool, teamId: number) =>
  (await pool.query<{ event: string; property: string }>('SELECT event, property FROM event_properties WHERE team_id = $1 ORDER BY event, property', [teamId])).rows.map((r) => `${r.event}.${r.property}`);

describe('definitions kept by ingest', () => {
  it('records each event name, property key with its inferred type, person and group property, written before the chunk is acknowledged', async () => {
    const teamId = h.tenant.project.id;
    const recent = Math.floor(Date.now() / 1000) - 60;
    await h.send([
      { event: 'purchase', distinct_id: 'buyer', properties: { price: 9.5, plan: 'pro', gift: false, paid_at: recent, $set: { email: 'b@shop.test' }, $set_once: { first_seen: '2026-01-01T00:00:00Z' } } },
      { event: '$pageview', distinct_id: 'buyer', properties: { $browser: 'Firefox', '$feature/checkout': true, utm_campaign: 2026, cart: { items: 2 }, tags: ['a'], coupon: null } },
      { event: '$groupidentify', distinct_id: 'buyer', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 12 } } },
    ]);
    await h.waitForEvents(3);
    // The consumer stops once it wrote and committed what it took: the definitions were written before each commit.
    await consumer.stop();

    expect((await eventDefinitions(h.pool, teamId)).map((e) => e.name)).toEqual(['$groupidentify', '$pageview', 'purchase']);
    expect(await propertyDefinitions(h.pool, teamId)).toEqual([
      { name: '$browser', type: 1, group_type_index: null, property_type: 'String', is_numerical: false },
      { name: '$feature/checkout', type: 1, group_type_index: null, property_type: 'String', is_numerical: false },
      // Values of no type yet are kept without one, as PostHog keeps them.
      { name: 'cart', type: 1, group_type_index: null, property_type: null, is_numerical: false },
      { name: 'coupon', type: 1, group_type_index: null, property_type: null, is_numerical: false },
      { name: 'gift', type: 1, group_type_index: null, property_type: 'Boolean', is_numerical: false },
      { name: 'paid_at', type: 1, group_type_index: null, property_type: 'DateTime', is_numerical: false },
      { name: 'plan', type: 1, group_type_index: null, property_type: 'String', is_numerical: false },
      { name: 'price', type: 1, group_type_index: null, property_type: 'Numeric', is_numerical: true },
      { name: 'tags', type: 1, group_type_index: null, property_type: null, is_numerical: false },
      { name: 'utm_campaign', type: 1, group_type_index: null, property_type: 'String', is_numerical: false },
      { name: 'email', type: 2, group_type_index: null, property_type: 'String', is_numerical: false },
      { name: 'first_seen', type: 2, group_type_index: null, property_type: 'DateTime', is_numerical: false },
      { name: 'seats', type: 3, group_type_index: 0, property_type: 'Numeric', is_numerical: true },
    ]);
    // Flag values are not linked to each event name (PostHog neither), nor are $set and $set_once event properties.
    expect(await eventProperties(h.pool, teamId)).toEqual(['$pageview.$browser', '$pageview.cart', '$pageview.coupon', '$pageview.tags', '$pageview.utm_campaign', 'purchase.gift', 'purchase.paid_at', 'purchase.plan', 'purchase.price']);
  }, 90_000);

  it('keeps the first type a property was given, and moves last_seen_at forward', async () => {
    const teamId = h.tenant.project.id;
    const before = (await eventDefinitions(h.pool, teamId)).find((e) => e.name === 'purchase')!.last_seen_at!;
    // A process of its own remembers nothing, so it writes the event and its keys again.
    consumer = await h.startConsumer();
    await h.send([{ event: 'purchase', distinct_id: 'buyer', properties: { price: 'free' } }]);
    await h.waitForEvents(4);
    await waitFor(async () => ((await eventDefinitions(h.pool, teamId)).find((e) => e.name === 'purchase')!.last_seen_at! > before ? true : undefined), {
      what: 'purchase seen again',
    });
    expect((await propertyDefinitions(h.pool, teamId)).find((p) => p.name === 'price')).toMatchObject({ property_type: 'Numeric', is_numerical: true });
  }, 90_000);
});

describe('a definitions write that fails', () => {
  it('neither fails nor stalls its chunk: it is counted, kept, and written with the next write', async () => {
    const teamId = h.tenant.project.id;
    const recorder = new DefinitionsRecorder();
    const failures: string[] = [];
    let refuse = true;
    const pool = {
      query: ((text: string, values: unknown[]) => (refuse ? Promise.reject(new Error('definitions table away')) : h.pool.query(text, values))) as Pool['query'],
    };
    const writer = new DefinitionsWriter({ pool, recorder, logger, failed: (reason) => failures.push(reason) });
    await writer.record(recorder.observe(teamId, 'kept for later', { size: 1 })!);
    expect(failures).toEqual(['error']);
    expect((await eventDefinitions(h.pool, teamId)).map((e) => e.name)).not.toContain('kept for later');

    refuse = false;
    await writer.record(recorder.observe(teamId, 'next one', {})!);
    expect((await eventDefinitions(h.pool, teamId)).map((e) => e.name)).toEqual(expect.arrayContaining(['kept for later', 'next one']));
    expect(recorder.observe(teamId, 'kept for later', { size: 2 })).toBeNull();
  });

  it('holds a chunk back no longer than it waits for it', async () => {
    const failures: string[] = [];
    const pool = { query: (() => new Promise(() => undefined)) as Pool['query'] };
    const writer = new DefinitionsWriter({ pool, recorder: new DefinitionsRecorder(), logger, failed: (reason) => failures.push(reason), waitMs: 50 });
    const started = Date.now();
    await writer.record(new DefinitionsRecorder().observe(h.tenant.project.id, 'slow', {})!);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(failures).toEqual(['slow']);
  });
});
