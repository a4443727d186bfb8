import { randomUUID } from 'node:crypto';
import { PersonCache } from '@tributary/control-plane';
import { startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import { testConfig, waitFor } from '@tributary/test-support';
import { useApi } from '../../api/test/api-harness.js';
import { buildDecide } from '../src/decide-app.js';

/**
 * Decide's hot path: flag definitions and cohorts come from each process's memory, persons from
 * one Redis read, and Postgres only when a flag needs what nothing else holds. A change made
 * through the api reaches every decide process through Redis pub/sub. Two decide processes are
 * built here by main.ts's builder, each counting the statements it sends to Postgres.
 */
const config = testConfig();
const logger = createLogger('decide-cache-test', config.logLevel);
const setup = useApi();

interface Decide {
  url: string;
  statements: string[];
  /** Cache lookups as decide's metrics count them, `cache:hit` or `cache:miss`. */
  lookups: string[];
  close: () => Promise<void>;
}

/** The pool as decide uses it, recording every statement. */
function counting(pool: Pool, statements: string[]): Pool {
  return new Proxy(pool, {
    get(target, property) {
      if (property === 'query') {
        return (...args: Parameters<Pool['query']>) => {
          const [text] = args as unknown as [string | { text: string }];
          statements.push(typeof text === 'string' ? text : text.text);
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function startDecide(unknownIds: { ttlMs?: number; clock?: () => number } = {}): Promise<Decide> {
  const statements: string[] = [];
  const lookups: string[] = [];
  const metrics = { evaluated: () => undefined, cacheLookup: (cache: string, hit: boolean) => lookups.push(`${cache}:${hit ? 'hit' : 'miss'}`) };
  const { options, stores } = await buildDecide({
    config: testConfig({ decidePort: 0, host: '127.0.0.1', decidePersonCopies: 1_000, decideRememberedAnswers: 1_000 }),
    logger,
    pool: (pool) => counting(pool, statements),
    metrics,
    unknownIds: { ttlMs: 60_000, ...unknownIds },
  });
  // A decide that never started must still close its connections, or jest cannot exit.
  await stores.personCache.untilLocalCopies().catch(async (error: unknown) => {
    await options.stop();
    throw error;
  });
  const runtime = await startServiceRuntime({ ...options, name: 'decide-test', shutdownTimeoutMs: 1_000 }, false);
  return { url: `http://127.0.0.1:${runtime.port}`, statements, lookups, close: () => runtime.shutdown('test finished') };
}

let decides: Decide[];
/** A third decide on a clock the test moves, to see the memory of unknown ids lapse. */
let late: Decide;
let lateNow = Date.now();
let token: string;
let projectId: number;

/** The remembered-answer lookups among what decide counted since it was last cleared. */
const answerLookups = (decide: Decide) => decide.lookups.filter((lookup) => lookup.startsWith('answers:'));

const flagsFor = async (decide: Decide, body: Record<string, unknown>, request: { query?: string; headers?: Record<string, string> } = {}): Promise<Record<string, boolean>> => {
  const response = await fetch(`${decide.url}/flags/?v=2${request.query ?? ''}`, { method: 'POST', body: JSON.stringify({ token, ...body }), headers: request.headers });
  expect(response.status).toBe(200);
  const answer = (await response.json()) as { flags: Record<string, { enabled: boolean }>; errorsWhileComputingFlags: boolean };
  expect(answer.errorsWhileComputingFlags).toBe(false);
  return Object.fromEntries(Object.entries(answer.flags).map(([key, flag]) => [key, flag.enabled]));
};
const flagsPath = () => `/api/projects/${projectId}/feature_flags/`;

beforeAll(async () => {
  const { api, tenant } = setup;
  token = tenant.project.api_token;
  projectId = tenant.project.id;
  await api.pool.query('INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, $2, 0)', [projectId, 'company']);
  await api.pool.query(`INSERT INTO groups (team_id, group_type_index, group_key, properties, created_at) VALUES ($1, 0, 'acme', '{"seats": 50}', now())`, [projectId]);
  const cache = new PersonCache(api.redis);
  await cache.set(projectId, ['ann'], { personId: 1, personUuid: randomUUID(), properties: { plan: 'pro' } });
  await cache.set(projectId, ['bob'], { personId: 2, personUuid: randomUUID(), properties: { plan: 'free' } });
  const flags = [
    { key: 'pro-plan', filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } },
    { key: 'big-company', filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'seats', value: 10, operator: 'gte', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] } },
  ];
  for (const flag of flags) expect((await api.request('POST', flagsPath(), tenant.personalApiKey, flag)).status).toBe(201);
  decides = [await startDecide(), await startDecide()];
  late = await startDecide({ ttlMs: 5_000, clock: () => lateNow });
});

afterAll(async () => {
  // Those started: a setup that failed half-way must not leave the others open, which keeps jest from exiting.
  await Promise.all([...(decides ?? []), late].filter((decide) => decide !== undefined).map((decide) => decide.close()));
});

describe('decide answers from memory and Redis', () => {
  it('sends no statement to Postgres per request once a project’s definitions are loaded', async () => {
    const withCompany = { groups: { company: 'acme' }, group_properties: { company: { seats: 50 } } };
    for (const decide of decides) await flagsFor(decide, { distinct_id: 'ann', ...withCompany });
    for (const decide of decides) decide.statements.length = 0;
    for (let i = 0; i < 10; i++) {
      for (const decide of decides) {
        expect(await flagsFor(decide, { distinct_id: 'ann', ...withCompany })).toEqual({ 'pro-plan': true, 'big-company': true });
        expect(await flagsFor(decide, { distinct_id: 'bob', groups: { company: 'acme' }, group_properties: { company: { seats: 2 } } })).toEqual({ 'pro-plan': false, 'big-company': false });
        expect(await flagsFor(decide, { distinct_id: 'someone-new' })).toMatchObject({ 'pro-plan': false });
      }
    }
    // An id no person has is looked up in Postgres once (Redis holds persons, not their absence), then remembered; nothing else is.
    for (const decide of decides) expect(decide.statements).toEqual([expect.stringContaining('person_distinct_ids')]);
  });

  it('answers by a person’s new properties as soon as ingest caches them, in every process that kept a copy', async () => {
    const id = `kept-${randomUUID()}`;
    const ingestSide = new PersonCache(setup.api.redis);
    await ingestSide.set(projectId, [id], { personId: 4, personUuid: randomUUID(), properties: { plan: 'pro' } });
    for (const decide of decides) expect(await flagsFor(decide, { distinct_id: id })).toMatchObject({ 'pro-plan': true });
    await ingestSide.set(projectId, [id], { personId: 4, personUuid: randomUUID(), properties: { plan: 'free' } });
    const started = Date.now();
    for (const decide of decides) {
      await waitFor(async () => (await flagsFor(decide, { distinct_id: id }))['pro-plan'] === false, { what: 'the new plan', intervalMs: 5, timeoutMs: 2_000 });
    }
    // Redis says so at once; a copy lapsing on its own (maxAgeMs) would take a minute.
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('counts each cache a request reads once, hit or miss, whether what it held was taken at once or awaited', async () => {
    const id = `counted-${randomUUID()}`;
    await new PersonCache(setup.api.redis).set(projectId, [id], { personId: 5, personUuid: randomUUID(), properties: { plan: 'pro' } });
    const [decide] = decides;
    await flagsFor(decide!, { distinct_id: 'ann' });
    decide!.lookups.length = 0;
    // First asked: no copy yet, so Redis is read, and the answer is not one to remember; then the copy answers.
    expect(await flagsFor(decide!, { distinct_id: id })).toMatchObject({ 'pro-plan': true });
    expect(decide!.lookups.sort()).toEqual(['answers:miss', 'flag_definitions:hit', 'person_copies:miss', 'person_properties:hit']);
    decide!.lookups.length = 0;
    expect(await flagsFor(decide!, { distinct_id: id })).toMatchObject({ 'pro-plan': true });
    expect(decide!.lookups.sort()).toEqual(['answers:miss', 'flag_definitions:hit', 'person_copies:hit', 'person_properties:hit']);
    // Worked out from the copy, the answer was remembered: checking it reads the same caches.
    decide!.lookups.length = 0;
    expect(await flagsFor(decide!, { distinct_id: id })).toMatchObject({ 'pro-plan': true });
    expect(decide!.lookups.sort()).toEqual(['answers:hit', 'flag_definitions:hit', 'person_copies:hit', 'person_properties:hit']);
  });

  it('asks Postgres about an id with no person only once a while, and sees a person ingest cached since at once', async () => {
    const id = `late-${randomUUID()}`;
    expect(await flagsFor(late, { distinct_id: id })).toMatchObject({ 'pro-plan': false });
    late.statements.length = 0;
    expect(await flagsFor(late, { distinct_id: id })).toMatchObject({ 'pro-plan': false });
    expect(late.statements).toEqual([]);
    lateNow += 5_000;
    expect(await flagsFor(late, { distinct_id: id })).toMatchObject({ 'pro-plan': false });
    expect(late.statements).toEqual([expect.stringContaining('person_distinct_ids')]);
    // Identified since: ingest cached the new person, which decide sees without waiting.
    await new PersonCache(setup.api.redis).set(projectId, [id], { personId: 3, personUuid: randomUUID(), properties: { plan: 'pro' } });
    expect(await flagsFor(late, { distinct_id: id })).toMatchObject({ 'pro-plan': true });
  });

  it('gives a remembered answer to the same request, whatever cache-busting parameters it carries, and works out others afresh', async () => {
    const id = `again-${randomUUID()}`;
    await new PersonCache(setup.api.redis).set(projectId, [id], { personId: 6, personUuid: randomUUID(), properties: { plan: 'pro' } });
    const [decide] = decides;
    const body = { distinct_id: id, groups: { company: 'acme' }, group_properties: { company: { seats: 50 } } };
    await flagsFor(decide!, body);
    await flagsFor(decide!, body);
    decide!.lookups.length = 0;
    expect(await flagsFor(decide!, body, { query: '&_=1764000000000&ver=1.200.0' })).toEqual({ 'pro-plan': true, 'big-company': true });
    expect(answerLookups(decide!)).toEqual(['answers:hit']);
    // Another client address may be elsewhere (location), another body is another question.
    expect(await flagsFor(decide!, body, { headers: { 'x-forwarded-for': '203.0.113.9' } })).toEqual({ 'pro-plan': true, 'big-company': true });
    expect(await flagsFor(decide!, { ...body, group_properties: { company: { seats: 2 } } })).toEqual({ 'pro-plan': true, 'big-company': false });
    expect(answerLookups(decide!)).toEqual(['answers:hit', 'answers:miss', 'answers:miss']);
  });

  it('never remembers an answer that read stored group properties, or an id with no person', async () => {
    const [decide] = decides;
    const body = { distinct_id: 'bob', groups: { company: 'acme' } };
    const unknown = { distinct_id: `nobody-${randomUUID()}` };
    for (let i = 0; i < 3; i++) {
      expect(await flagsFor(decide!, body)).toEqual({ 'pro-plan': false, 'big-company': true });
      expect(await flagsFor(decide!, unknown)).toMatchObject({ 'pro-plan': false });
    }
    decide!.lookups.length = 0;
    await flagsFor(decide!, body);
    await flagsFor(decide!, unknown);
    expect(answerLookups(decide!)).toEqual(['answers:miss', 'answers:miss']);
  });

  it('reads a group’s stored properties only when the request leaves out a key the flags compare', async () => {
    const [decide] = decides;
    decide!.statements.length = 0;
    expect(await flagsFor(decide!, { distinct_id: 'bob', groups: { company: 'acme' } })).toEqual({ 'pro-plan': false, 'big-company': true });
    expect(decide!.statements).toHaveLength(1);
    expect(decide!.statements[0]).toMatch(/FROM groups/);
  });

  it('sees a flag changed through the api in every decide process at once', async () => {
    const { api, tenant } = setup;
    const { body: listed } = await api.request('GET', flagsPath(), tenant.personalApiKey);
    const proPlan = (listed.results as { id: number; key: string }[]).find((flag) => flag.key === 'pro-plan')!;
    const changed = await api.request('PATCH', `${flagsPath()}${proPlan.id}/`, tenant.personalApiKey, { filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
    expect(changed.status).toBe(200);
    for (const decide of decides) {
      await waitFor(async () => (await flagsFor(decide, { distinct_id: 'ann' }))['pro-plan'] === false, { timeoutMs: 5_000, what: 'decide to see the changed flag' });
    }
  });

  // Last: the date flag it adds keeps every answer of the project from being remembered.
  it('never remembers answers once a flag compares a date, which may be relative to now', async () => {
    const { api, tenant } = setup;
    const recent = { key: 'recent-signup', filters: { groups: [{ properties: [{ key: 'signed_up', value: '-7d', operator: 'is_date_after', type: 'person' }], rollout_percentage: 100 }] } };
    expect((await api.request('POST', flagsPath(), tenant.personalApiKey, recent)).status).toBe(201);
    const [decide] = decides;
    await waitFor(async () => 'recent-signup' in (await flagsFor(decide!, { distinct_id: 'ann' })), { timeoutMs: 5_000, what: 'decide to see the new flag' });
    await flagsFor(decide!, { distinct_id: 'ann' });
    decide!.lookups.length = 0;
    await flagsFor(decide!, { distinct_id: 'ann' });
    expect(answerLookups(decide!)).toEqual(['answers:miss']);
  });
});
