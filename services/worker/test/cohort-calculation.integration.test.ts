import { randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, createClickHouse, distinctIdRow, migrateClickHouse, type ClickHouse } from '@tributary/clickhouse';
import { FeatureFlagStore, PersonCache } from '@tributary/control-plane';
import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { PostHog } from 'posthog-node';
import { createLogger } from '@tributary/logger';
import { migratePostgres, type Pool } from '@tributary/postgres';
import { createRedis, type Redis } from '@tributary/redis';
import { EVENT_ROW_COLUMNS, createPool, createTestTenant, eventRow, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { startApi } from '../../api/test/api-harness.js';
import { dropIsolatedStores, isolatedStores } from '../../api/test/isolated-stores.js';
import { buildDecide } from '../../decide/src/decide-app.js';
import { calculateCohort, type CohortCalculationDeps } from '../src/cohort-calculation/calculate-cohort.js';
import { startCohortCalculationQueue } from '../src/cohort-calculation/cohort-calculation-queue.js';
import { CohortCalculationStore, type Calculation } from '../src/cohort-calculation/cohort-calculation-store.js';
import { cohortMembersReader } from '../src/cohort-calculation/cohort-members-reader.js';
import { cohortStatement } from '../src/cohort-calculation/cohort-statement.js';

/**
 * Behavioural cohorts for flags, end to end on the real stores: the worker calculates a cohort's
 * members in ClickHouse and lists them in Postgres under a version; decide answers a flag that
 * targets the cohort from that listing alone. Stores of the test's own, since the scheduler
 * looks at every project's cohorts.
 */
// A cluster's shards run their part of the cohort's statement (its person and distinct-id
// subqueries) in the database remote_servers names for them, the stack's, not this test's own, so
// on a cluster the calculation would read other rows: the suite runs on a single node.
const describeOnSingleNode = process.env.TOPOLOGY === 'cluster' ? describe.skip : describe;
const stores = isolatedStores(uniqueName('cohort_calc'));
const config = testConfig(stores);
const logger = createLogger('cohort-calculation-test', config.logLevel);

let pool: Pool;
let clickhouse: ClickHouse;
let redis: Redis;
let store: CohortCalculationStore;
let decide: ServiceRuntime;
/** Statements decide sent to Postgres. */
const decideStatements: string[] = [];
let shop: TestTenant;
let other: TestTenant;

const BEHAVIOURAL = { type: 'OR', values: [{ type: 'AND', values: [{ key: 'purchase', type: 'behavioral', value: 'performed_event', event_type: 'events', time_value: 30, time_interval: 'day' }] }] };
const chTime = (date: Date) => date.toISOString().replace('T', ' ').slice(0, 19);
const daysAgo = (days: number) => chTime(new Date(Date.now() - days * 86_400_000));

const deps = (overrides: Partial<CohortCalculationDeps> = {}): CohortCalculationDeps => ({
  store,
  members: cohortMembersReader({ clickhouse, statement: cohortStatement(store), limits: config }),
  logger,
  batchSize: 2,
  ...overrides,
});

/**
 * A calculation expected to succeed. The shared ClickHouse server, loaded by every test run on
 * the machine, now and then cannot start a thread for a query ("Resource temporarily
 * unavailable"); the worker records that as a failure and tries again later, and so does this.
 */
async function calculated(cohortId: number): Promise<void> {
  let outcome = await calculateCohort(deps(), cohortId);
  for (let attempt = 1; outcome === 'failed' && attempt < 5; attempt++) outcome = await calculateCohort(deps(), cohortId);
  expect(outcome).toBe('calculated');
}

/** A person of the project with a distinct id, in Postgres and in ClickHouse's copies, as ingest writes them. */
async function person(tenant: TestTenant, distinctId: string): Promise<{ id: number; uuid: string }> {
  const uuid = randomUUID();
  const { rows } = await pool.query<{ id: number }>("INSERT INTO persons (uuid, team_id, properties, created_at) VALUES ($1, $2, '{}', now()) RETURNING id", [uuid, tenant.project.id]);
  await pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [tenant.project.id, distinctId, rows[0]!.id]);
  await clickhouse.insert('person', PERSON_COLUMNS, [{ id: uuid, created_at: daysAgo(100), team_id: tenant.project.id, properties: '{}', is_identified: 1, is_deleted: 0, version: 0 }]);
  await clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, [distinctIdRow(tenant.project.id, { distinctId, personUuid: uuid, version: 0 }, { deleted: false })]);
  return { id: rows[0]!.id, uuid };
}

const purchase = (tenant: TestTenant, distinctId: string, days: number) => clickhouse.insert('events', EVENT_ROW_COLUMNS, [eventRow(tenant.project.id, distinctId, 'purchase', daysAgo(days))]);

async function cohort(tenant: TestTenant, filters: unknown = BEHAVIOURAL): Promise<number> {
  const { rows } = await pool.query<{ id: number }>("INSERT INTO cohorts (team_id, name, filters) VALUES ($1, 'buyers', $2) RETURNING id", [tenant.project.id, { properties: filters }]);
  return rows[0]!.id;
}

async function flagOn(tenant: TestTenant, cohortId: number): Promise<string> {
  const key = uniqueName('buyers-flag');
  const filters = { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohortId }], rollout_percentage: 100 }] };
  await new FeatureFlagStore(pool, redis).create(tenant.project.id, { key, name: key, filters, active: true, ensure_experience_continuity: false }, null);
  return key;
}

async function flags(tenant: TestTenant, distinctId: string): Promise<Record<string, boolean | string>> {
  const response = await fetch(`http://127.0.0.1:${decide.port}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: tenant.project.api_token, distinct_id: distinctId }) });
  const answer = (await response.json()) as { featureFlags: Record<string, boolean | string>; errorsWhileComputingFlags: boolean };
  expect(answer.errorsWhileComputingFlags).toBe(false);
  return answer.featureFlags;
}

const state = async (cohortId: number) =>
  (
    await pool.query<{ version: number | null; is_calculating: boolean; last_calculation: Date | null; errors_calculating: number; calculated_count: number | null }>(
      'SELECT version, is_calculating, last_calculation, errors_calculating, calculated_count FROM cohorts WHERE id = $1',
      [cohortId],
    )
  ).rows[0]!;
const listedVersions = async (cohortId: number) =>
  (await pool.query<{ version: number }>('SELECT DISTINCT version FROM cohort_calculated_people WHERE cohort_id = $1 ORDER BY version', [cohortId])).rows.map((r) => r.version);

beforeAll(async () => {
  await migratePostgres(config);
  await migrateClickHouse(config);
  pool = createPool(config, { max: 5 });
  clickhouse = createClickHouse(config);
  redis = createRedis(config);
  store = new CohortCalculationStore(pool);
  [shop, other] = [await createTestTenant(pool, config), await createTestTenant(pool, config)];
  // Decide cannot reach ClickHouse at all: whatever it answers comes from Postgres and Redis.
  const { options, stores: decideStores } = await buildDecide({
    config: testConfig({ ...stores, decidePort: 0, host: '127.0.0.1', clickhouseUrl: 'http://127.0.0.1:9' }),
    logger,
    pool: (decidePool) =>
      new Proxy(decidePool, {
        get(target, property) {
          if (property === 'query') {
            return (text: string, values?: unknown[]) => {
              decideStatements.push(text);
              return target.query(text, values);
            };
          }
          const value = Reflect.get(target, property) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }),
  });
  // A decide that never started must still close its connections, or jest cannot exit.
  await decideStores.personCache.untilLocalCopies().catch(async (error: unknown) => {
    await options.stop();
    throw error;
  });
  decide = await startServiceRuntime({ ...options, shutdownTimeoutMs: 1_000 }, false);
});

afterAll(async () => {
  await decide?.shutdown('test finished');
  await pool?.end();
  await clickhouse?.close();
  redis?.disconnect();
  await dropIsolatedStores(config);
});

describeOnSingleNode('flags on a behavioural cohort', () => {
  it('answers from the members the worker calculated: those who did the event in the window, no one else, and not by another project’s events', async () => {
    await person(shop, 'ann');
    await person(shop, 'bob');
    await person(shop, 'cat');
    await person(other, 'bob');
    await purchase(shop, 'ann', 2);
    // Too long ago for "in the last 30 days".
    await purchase(shop, 'cat', 45);
    // The other project's bob bought: a person of this project with the same distinct id did not.
    await purchase(other, 'bob', 1);
    const buyers = await cohort(shop);
    const key = await flagOn(shop, buyers);

    await calculated(buyers);
    expect(await flags(shop, 'ann')).toMatchObject({ [key]: true });
    expect(await flags(shop, 'bob')).toMatchObject({ [key]: false });
    expect(await flags(shop, 'cat')).toMatchObject({ [key]: false });
    expect(await flags(shop, 'someone-new')).toMatchObject({ [key]: false });
    expect(await state(buyers)).toMatchObject({ is_calculating: false, errors_calculating: 0, calculated_count: 1, last_calculation: expect.any(Date) });

    // Decide read the listing from Postgres, and could not have asked ClickHouse (it has no address for it).
    expect(decideStatements.some((text) => text.includes('cohort_calculated_people'))).toBe(true);
  });

  it('changes its answer after a recalculation that finds new events, however often the same request came before, and keeps only the current version', async () => {
    const dan = await person(shop, 'dan');
    // As ingest caches a person: decide then holds a copy, the kind of answer it may remember.
    await new PersonCache(redis).set(shop.project.id, ['dan'], { personId: dan.id, personUuid: dan.uuid, properties: {} });
    const buyers = await cohort(shop);
    const key = await flagOn(shop, buyers);
    await calculated(buyers);
    for (let i = 0; i < 3; i++) expect(await flags(shop, 'dan')).toMatchObject({ [key]: false });

    await purchase(shop, 'dan', 1);
    // Until the worker calculates again, decide answers as last calculated.
    expect(await flags(shop, 'dan')).toMatchObject({ [key]: false });
    await calculated(buyers);
    expect(await flags(shop, 'dan')).toMatchObject({ [key]: true });
    const { version } = await state(buyers);
    expect(await listedVersions(buyers)).toEqual([version]);
  });

  it('never shows a half-written version: decide reads the old members until the new ones are all written', async () => {
    const names = ['eve', 'fay', 'gus', 'hal'];
    const people = await Promise.all(names.map((name) => person(shop, name)));
    await purchase(shop, 'eve', 3);
    const buyers = await cohort(shop);
    const key = await flagOn(shop, buyers);
    await calculated(buyers);
    expect(await flags(shop, 'eve')).toMatchObject({ [key]: true });

    // The next calculation finds fay, gus and hal, and not eve; it stops after its first batch until let go.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstWritten!: () => void;
    const wroteFirst = new Promise<void>((resolve) => (firstWritten = resolve));
    async function* slowly(): AsyncIterable<string[]> {
      yield [people[1]!.uuid, people[2]!.uuid];
      firstWritten();
      await released;
      yield [people[3]!.uuid];
    }
    const running = calculateCohort(deps({ members: (_calculation: Calculation) => slowly(), batchSize: 2 }), buyers);
    await wroteFirst;
    await waitFor(async () => (await listedVersions(buyers)).length === 2, { what: 'the first batch written' });
    // Written but not current: decide still answers by the old members alone.
    expect(await state(buyers)).toMatchObject({ is_calculating: true });
    expect(await flags(shop, 'eve')).toMatchObject({ [key]: true });
    for (const name of ['fay', 'gus', 'hal']) expect(await flags(shop, name)).toMatchObject({ [key]: false });

    release();
    expect(await running).toBe('calculated');
    expect(await flags(shop, 'eve')).toMatchObject({ [key]: false });
    for (const name of ['fay', 'gus', 'hal']) expect(await flags(shop, name)).toMatchObject({ [key]: true });
    expect(await state(buyers)).toMatchObject({ is_calculating: false, calculated_count: 3 });
    expect((await listedVersions(buyers)).length).toBe(1);
  });

  it('records a failed calculation on the cohort and keeps the members it had', async () => {
    await person(shop, 'ivy');
    await purchase(shop, 'ivy', 1);
    const buyers = await cohort(shop);
    const key = await flagOn(shop, buyers);
    await calculated(buyers);
    const before = await state(buyers);

    async function* failing(): AsyncIterable<string[]> {
      yield [randomUUID()];
      throw new Error('ClickHouse went away');
    }
    expect(await calculateCohort(deps({ members: () => failing() }), buyers)).toBe('failed');
    expect(await state(buyers)).toMatchObject({ version: before.version, is_calculating: false, errors_calculating: 1, calculated_count: before.calculated_count });
    expect(await listedVersions(buyers)).toEqual([before.version]);
    expect(await flags(shop, 'ivy')).toMatchObject({ [key]: true });
  });

  it('calculates a cohort that nests a behavioural one, and leaves a cohort of person properties to decide', async () => {
    await person(shop, 'jo');
    await person(shop, 'kay');
    await purchase(shop, 'jo', 1);
    const buyers = await cohort(shop);
    const nesting = await cohort(shop, { type: 'AND', values: [{ key: 'id', type: 'cohort', value: buyers }] });
    const plain = await cohort(shop, { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] });
    const key = await flagOn(shop, nesting);
    await calculated(nesting);
    expect(await flags(shop, 'jo')).toMatchObject({ [key]: true });
    expect(await flags(shop, 'kay')).toMatchObject({ [key]: false });
    expect(await calculateCohort(deps(), plain)).toBe('skipped');
    expect(await state(plain)).toMatchObject({ version: null, is_calculating: false });
  });

  it('reads nothing of another project: a cohort naming another project’s cohort fails, recorded, with no members', async () => {
    await person(other, 'mo');
    await purchase(other, 'mo', 1);
    const theirs = await cohort(other);
    const ours = await cohort(shop, { type: 'AND', values: [BEHAVIOURAL, { key: 'id', type: 'cohort', value: theirs }] });
    expect(await calculateCohort(deps(), ours)).toBe('failed');
    expect(await state(ours)).toMatchObject({ version: null, errors_calculating: 1, is_calculating: false });
    expect(await listedVersions(ours)).toEqual([]);
  });
});

describeOnSingleNode('local evaluation', () => {
  it('sends a behavioural cohort as PostHog does, so an SDK cannot match it locally and asks decide', async () => {
    await person(shop, 'lee');
    await purchase(shop, 'lee', 1);
    const buyers = await cohort(shop);
    const key = await flagOn(shop, buyers);
    await calculated(buyers);
    const response = await fetch(`http://127.0.0.1:${decide.port}/api/feature_flag/local_evaluation?token=${shop.project.api_token}&send_cohorts`, {
      headers: { authorization: `Bearer ${shop.personalApiKey}` },
    });
    const body = (await response.json()) as { cohorts: Record<string, unknown> };
    expect(body.cohorts[String(buyers)]).toEqual(BEHAVIOURAL);

    const client = new PostHog(shop.project.api_token, { host: `http://127.0.0.1:${decide.port}`, personalApiKey: shop.personalApiKey, featureFlagsPollingInterval: 60_000, sendFeatureFlagEvent: false });
    try {
      await client.reloadFeatureFlags();
      expect(await client.getFeatureFlag(key, 'lee', { onlyEvaluateLocally: true })).toBeUndefined();
      expect(await client.getFeatureFlag(key, 'lee')).toBe(true);
    } finally {
      await client.shutdown();
    }
  });
});

describeOnSingleNode('the cohort API', () => {
  it('shows a behavioural cohort’s calculation as PostHog does, and lists it among the cohorts of its members', async () => {
    const api = await startApi(stores);
    try {
      const nat = await person(shop, 'nat');
      await purchase(shop, 'nat', 1);
      const buyers = await cohort(shop);
      const get = async () => (await api.request('GET', `/api/projects/${shop.project.id}/cohorts/${buyers}/`, shop.personalApiKey)).body;
      expect(await get()).toMatchObject({ is_calculating: false, last_calculation: null, errors_calculating: 0, count: null });
      await calculated(buyers);
      const shown = await get();
      expect(shown).toMatchObject({ is_calculating: false, errors_calculating: 0, count: (await state(buyers)).calculated_count });
      expect(new Date(shown.last_calculation).getTime()).toBe((await state(buyers)).last_calculation!.getTime());
      const ofNat = (await api.request('GET', `/api/projects/${shop.project.id}/persons/cohorts/?person_id=${nat.uuid}`, shop.personalApiKey)).body.results as { id: number }[];
      expect(ofNat.map((c) => c.id)).toContain(buyers);
    } finally {
      await api.close();
    }
  });
});

describeOnSingleNode('the scheduled calculation', () => {
  it('calculates every cohort due on its own schedule, and one that fails does not stop the others', async () => {
    const tenant = await createTestTenant(pool, config);
    await person(tenant, 'kim');
    await purchase(tenant, 'kim', 1);
    const first = await cohort(tenant);
    // Behavioural, and nesting a cohort the project does not have: its statement cannot be built.
    const broken = await cohort(tenant, { type: 'AND', values: [BEHAVIOURAL, { key: 'id', type: 'cohort', value: first + 1_000_000 }] });
    const last = await cohort(tenant);
    const key = await flagOn(tenant, last);
    const connection = createRedis(config, { forQueues: true });
    const queue = await startCohortCalculationQueue(
      { ...deps(), store },
      { connection, prefix: config.queuePrefix, tickMs: 200, intervalMs: 2_000, concurrency: 1 },
    );
    try {
      await waitFor(async () => (await state(first)).version !== null && (await state(last)).version !== null && (await state(broken)).errors_calculating > 0, {
        what: 'the cohorts calculated',
        timeoutMs: 20_000,
      });
    } finally {
      await queue.close();
      connection.disconnect();
    }
    expect(await state(broken)).toMatchObject({ version: null });
    expect(await flags(tenant, 'kim')).toMatchObject({ [key]: true });
  });
});
