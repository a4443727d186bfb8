import { randomUUID } from 'node:crypto';
import { EVENT_ROW_COLUMNS, createTestTenant, eventRow, waitFor, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const trend = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', dateRange: { date_from: '2024-01-01', date_to: '2024-01-02' } };
const query = (body: object, refresh?: unknown) => api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: body, ...(refresh !== undefined && { refresh }) });
const pageview = (distinctId: string) => eventRow(tenant.project.id, distinctId, '$pageview', '2024-01-01 12:00:00');

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [pageview('ann')]);
});

describe('insight answers are cached by query and data freshness', () => {
  it('force_cache answers nothing before anything was computed', async () => {
    const { status, body } = await query(trend, 'force_cache');
    expect(status).toBe(200);
    expect(body).toMatchObject({ results: null, is_cached: false, last_refresh: null });
  });

  it('blocking computes once, then answers from the cache while the data is unchanged', async () => {
    const first = await query(trend);
    expect(first.body).toMatchObject({ is_cached: false });
    expect(first.body.results[0].data).toEqual([1, 0]);
    // The same query with its keys in another order is the same entry.
    const second = await query({ dateRange: trend.dateRange, interval: 'day', series: trend.series, kind: 'TrendsQuery' });
    expect(second.body).toMatchObject({ is_cached: true, last_refresh: first.body.last_refresh, cache_key: first.body.cache_key });
    expect(second.body.results).toEqual(first.body.results);
    expect((await query(trend, 'force_cache')).body).toMatchObject({ is_cached: true });
  });

  it('a newly stored event makes the cached answer stale within seconds (the data version is reused 5 s)', async () => {
    await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [pageview('bob')]);
    const body = await waitFor(async () => {
      const answer = (await query(trend)).body;
      return answer.is_cached ? undefined : answer;
    }, { timeoutMs: 15_000, intervalMs: 500, what: 'a recomputed answer' });
    expect(body.results[0].data).toEqual([2, 0]);
  });

  it('the sampling factor keys the entry: a sampled answer is not the whole one, and is cached as sampled', async () => {
    const whole = await query(trend);
    const sampled = await query({ ...trend, samplingFactor: 0.5 });
    expect(sampled.status).toBe(200);
    expect(sampled.body).toMatchObject({ is_cached: false, samplingRate: { numerator: 0.5, denominator: 1 } });
    expect(sampled.body.cache_key).not.toBe(whole.body.cache_key);
    expect(whole.body.samplingRate).toBeUndefined();
    const again = await query({ ...trend, samplingFactor: 0.5 });
    expect(again.body).toMatchObject({ is_cached: true, cache_key: sampled.body.cache_key, samplingRate: { numerator: 0.5, denominator: 1 } });
    expect((await query({ ...trend, samplingFactor: 0.25 })).body.cache_key).not.toBe(sampled.body.cache_key);
  });

  it.each([0, -0.1, 1.5, '0.5'])('samplingFactor %p is a 400 naming it', async (factor) => {
    const { status, body } = await query({ ...trend, samplingFactor: factor });
    expect(status).toBe(400);
    expect(JSON.stringify(body)).toContain('samplingFactor');
  });

  it('force_blocking always computes; an unknown mode is a 400 naming refresh', async () => {
    expect((await query(trend, 'force_blocking')).body.is_cached).toBe(false);
    expect((await query(trend, true)).body.is_cached).toBe(false);
    const { status, body } = await query(trend, 'sometimes');
    expect(status).toBe(400);
    expect(body.attr).toBe('refresh');
  });

  it("another project's identical query is another entry", async () => {
    const other = await createTestTenant(api.pool, api.config);
    const { body } = await api.request('POST', `/api/environments/${other.project.id}/query/`, other.personalApiKey, { query: trend });
    expect(body.is_cached).toBe(false);
    expect(body.results[0].data).toEqual([0, 0]);
  });
});

describe('an answer that filters by a cohort is the answer for the cohort as it is now', () => {
  const signedIn = (distinctId: string) => eventRow(tenant.project.id, distinctId, 'signed in', '2024-01-01 12:00:00');
  const byCohort = (id: number) => ({ ...trend, series: [{ kind: 'EventsNode', event: 'signed in' }], properties: [{ key: 'id', type: 'cohort', value: id }] });
  const cohortPath = (id?: number) => `/api/projects/${tenant.project.id}/cohorts/${id === undefined ? '' : `${id}/`}`;

  beforeAll(async () => {
    for (const distinctId of ['cohort-ann', 'cohort-bob']) {
      const { rows } = await api.pool.query<{ id: number }>('INSERT INTO persons (uuid, team_id, properties, created_at) VALUES ($1, $2, $3, now()) RETURNING id', [randomUUID(), tenant.project.id, {}]);
      await api.pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [tenant.project.id, distinctId, rows[0]!.id]);
    }
    await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [signedIn('cohort-ann'), signedIn('cohort-bob')]);
  });

  it("a static cohort's new members are counted at once, not after the cached answer for the old ones", async () => {
    const cohort = await api.request('POST', cohortPath(), tenant.personalApiKey, { name: 'ann', is_static: true, distinct_ids: ['cohort-ann'] });
    expect(cohort.status).toBe(201);
    const before = await query(byCohort(cohort.body.id));
    expect(before.body.results[0].data).toEqual([1, 0]);
    expect((await query(byCohort(cohort.body.id))).body.is_cached).toBe(true);

    expect((await api.request('PATCH', cohortPath(cohort.body.id), tenant.personalApiKey, { distinct_ids: ['cohort-ann', 'cohort-bob'] })).status).toBe(200);
    // The edited cohort makes it another question: even force_cache does not answer the old one's.
    expect((await query(byCohort(cohort.body.id), 'force_cache')).body).toMatchObject({ results: null, is_cached: false });
    const after = await query(byCohort(cohort.body.id));
    expect(after.body).toMatchObject({ is_cached: false });
    expect(after.body.results[0].data).toEqual([2, 0]);
    expect(after.body.cache_key).not.toBe(before.body.cache_key);
  });

  it("a dynamic cohort's edited filters are applied, not the cached answer for the old ones", async () => {
    const filters = (value: string) => ({ properties: { type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value }] } });
    const cohort = await api.request('POST', cohortPath(), tenant.personalApiKey, { name: 'by email', filters: filters('@a.test') });
    expect((await query(byCohort(cohort.body.id))).body.is_cached).toBe(false);
    expect((await query(byCohort(cohort.body.id))).body.is_cached).toBe(true);
    expect((await api.request('PATCH', cohortPath(cohort.body.id), tenant.personalApiKey, { filters: filters('@b.test') })).status).toBe(200);
    expect((await query(byCohort(cohort.body.id))).body.is_cached).toBe(false);
  });

  it('a deleted cohort is refused, not answered from the cache', async () => {
    const cohort = await api.request('POST', cohortPath(), tenant.personalApiKey, { name: 'short-lived', is_static: true, distinct_ids: ['cohort-ann'] });
    expect((await query(byCohort(cohort.body.id))).status).toBe(200);
    expect((await api.request('DELETE', cohortPath(cohort.body.id), tenant.personalApiKey)).status).toBe(204);
    const { status, body } = await query(byCohort(cohort.body.id));
    expect(status).toBe(400);
    expect(body.detail).toMatch(/cohort .* does not exist/);
  });
});
