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
