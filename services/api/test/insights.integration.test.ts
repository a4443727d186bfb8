import { EVENT_ROW_COLUMNS, createKey, createTestTenant, eventRow, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const trend = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', dateRange: { date_from: '2024-01-01', date_to: '2024-01-02' } } };
const insightsPath = (project = tenant.project.id) => `/api/environments/${project}/insights/`;
const call = (method: string, path: string, body?: unknown, key = tenant.personalApiKey) => api.request(method, path, key, body);
const create = (body: object) => call('POST', insightsPath(), body);

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  const day = (d: number) => `2024-01-0${d} 12:00:00`;
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
    eventRow(tenant.project.id, 'ann', '$pageview', day(1), { $pathname: '/', $referring_domain: 'google.com' }),
    eventRow(tenant.project.id, 'bob', '$pageview', day(1), { $pathname: '/pricing', $referring_domain: '$direct' }),
    eventRow(tenant.project.id, 'ann', '$pageview', day(2), { $pathname: '/' }),
  ]);
});

describe('saved insights', () => {
  it('creates one with PostHog fields and answers 201', async () => {
    const { status, body } = await create({ name: 'Pageviews', description: 'Daily', query: trend, tags: [' web ', 'web'], favorited: true });
    expect(status).toBe(201);
    expect(body).toMatchObject({ id: expect.any(Number), short_id: expect.stringMatching(/^[A-Za-z0-9]{8}$/), name: 'Pageviews', description: 'Daily', query: trend, tags: ['web'], favorited: true, saved: true, deleted: false, dashboards: [] });
    expect(body.created_by).toMatchObject({ id: tenant.user.id });
  });

  it('answers from the cache by default, computes with refresh=blocking, and recomputes with force_blocking', async () => {
    const { body: insight } = await create({ name: 'Cached', query: trend });
    const cold = await call('GET', `${insightsPath()}${insight.id}/`);
    expect(cold.status).toBe(200);
    expect(cold.body).toMatchObject({ result: null, is_cached: false, last_refresh: null, timezone: 'UTC' });

    const computed = await call('GET', `${insightsPath()}${insight.id}/?refresh=blocking`);
    expect(computed.body).toMatchObject({ is_cached: false, hogql: expect.stringContaining('count()') });
    expect(computed.body.result[0]).toMatchObject({ data: [2, 1], days: ['2024-01-01', '2024-01-02'] });

    const cached = await call('GET', `${insightsPath()}${insight.id}/`);
    expect(cached.body).toMatchObject({ is_cached: true, last_refresh: computed.body.last_refresh });
    expect(cached.body.result).toEqual(computed.body.result);
    expect((await call('GET', `${insightsPath()}${insight.id}/?refresh=force_blocking`)).body.is_cached).toBe(false);
  });

  it('lists the live ones, newest first, filtered by short_id, favorited and search; basic leaves results out', async () => {
    const { body: one } = await create({ name: 'Signup funnel', query: { kind: 'InsightVizNode', source: { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signed up' }] } } });
    const list = await call('GET', insightsPath());
    expect(list.status).toBe(200);
    expect(list.body.count).toBeGreaterThanOrEqual(3);
    expect(list.body.results[0]).toMatchObject({ id: one.id, result: null });
    expect((await call('GET', `${insightsPath()}?short_id=${one.short_id}`)).body.results.map((i: { id: number }) => i.id)).toEqual([one.id]);
    expect((await call('GET', `${insightsPath()}?search=funnel`)).body.results.map((i: { id: number }) => i.id)).toEqual([one.id]);
    expect((await call('GET', `${insightsPath()}?favorited=true`)).body.results.every((i: { favorited: boolean }) => i.favorited)).toBe(true);
    expect((await call('GET', `${insightsPath()}?basic=true`)).body.results[0]).not.toHaveProperty('result');
  });

  it('updates fields and the dashboards showing it; a deleted one is gone', async () => {
    const { body: insight } = await create({ name: 'Old', query: trend });
    const dashboard = (await call('POST', `/api/environments/${tenant.project.id}/dashboards/`, { name: 'Board' })).body;
    const patched = await call('PATCH', `${insightsPath()}${insight.id}/`, { name: 'New', tags: ['x'], dashboards: [dashboard.id] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'New', tags: ['x'], dashboards: [dashboard.id] });
    const board = await call('GET', `/api/environments/${tenant.project.id}/dashboards/${dashboard.id}/`);
    expect(board.body.tiles.map((t: { insight: { id: number } }) => t.insight.id)).toEqual([insight.id]);

    expect((await call('PATCH', `${insightsPath()}${insight.id}/`, { dashboards: [] })).body.dashboards).toEqual([]);
    expect((await call('DELETE', `${insightsPath()}${insight.id}/`)).status).toBe(204);
    expect((await call('GET', `${insightsPath()}${insight.id}/`)).status).toBe(404);
    expect((await call('GET', insightsPath())).body.results.map((i: { id: number }) => i.id)).not.toContain(insight.id);
    const soft = (await create({ name: 'Soft', query: trend })).body;
    expect((await call('PATCH', `${insightsPath()}${soft.id}/`, { deleted: true })).body.deleted).toBe(true);
    expect((await call('GET', `${insightsPath()}${soft.id}/`)).status).toBe(404);
  });

  it('lists the dashboards showing it in the order they were given', async () => {
    const board = async (name: string) => (await call('POST', `/api/environments/${tenant.project.id}/dashboards/`, { name })).body.id as number;
    const first = await board('First');
    const second = await board('Second');
    expect((await create({ name: 'Both', query: trend, dashboards: [second, first] })).body.dashboards).toEqual([second, first]);
  });

  it('refuses a query it cannot run, an unknown dashboard and a bad refresh, naming the field', async () => {
    const cases: [object, string][] = [
      [{ query: { kind: 'InsightVizNode', source: { kind: 'HogQLQuery', query: 'SELECT 1' } } }, 'query.source'],
      [{ query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: 'all' } } }, 'query.source.series'],
      [{ query: { kind: 'ErrorTrackingQuery' } }, 'query.kind'],
      [{ query: trend, dashboards: [999_999_999] }, 'dashboards'],
      [{ name: 'no query' }, 'query'],
    ];
    for (const [body, attr] of cases) {
      const { status, body: error } = await create(body);
      expect([status, error.attr]).toEqual([400, attr]);
    }
    const { body: insight } = await create({ query: trend });
    expect((await call('GET', `${insightsPath()}${insight.id}/?refresh=later`)).body.attr).toBe('refresh');
  });

  it('saves SQL insights too: a HogQLQuery in a DataVisualizationNode', async () => {
    const { body: insight } = await create({ name: 'SQL', query: { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } } });
    const { body } = await call('GET', `${insightsPath()}${insight.id}/?refresh=blocking`);
    expect(body.result).toEqual([[3]]);
    expect(body.columns).toEqual(['count()']);
  });

  it('needs insight:read to read and insight:write to change', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['insight:read']);
    const other = await createKey(api.pool, api.config, tenant.user.id, ['dashboard:read']);
    expect((await call('GET', insightsPath(), undefined, reader)).status).toBe(200);
    expect((await call('POST', insightsPath(), { query: trend }, reader)).status).toBe(403);
    expect((await call('GET', insightsPath(), undefined, other)).status).toBe(403);
  });

  it("never shows another project's insights", async () => {
    const { body: mine } = await create({ name: 'Mine', query: trend });
    const stranger = await createTestTenant(api.pool, api.config);
    expect((await call('GET', `${insightsPath(stranger.project.id)}${mine.id}/`, undefined, stranger.personalApiKey)).status).toBe(404);
    expect((await call('GET', insightsPath(stranger.project.id), undefined, stranger.personalApiKey)).body.count).toBe(0);
    expect((await call('PATCH', `${insightsPath(stranger.project.id)}${mine.id}/`, { name: 'Theirs' }, stranger.personalApiKey)).status).toBe(404);
  });
});

describe('trends broken down by an event property', () => {
  it('counts each value as text: a string and a number of the same text together, escapes read, JSON null, empty and absent as the null value', async () => {
    const at = '2024-01-05 12:00:00';
    const browsers: unknown[] = ['7', 7, 'a"b\\c', true, null, ''];
    await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [...browsers.map((b) => eventRow(tenant.project.id, 'ann', 'breakdown check', at, { $browser: b })), eventRow(tenant.project.id, 'ann', 'breakdown check', at)]);
    const query = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'breakdown check' }], interval: 'day', dateRange: { date_from: '2024-01-05', date_to: '2024-01-05' }, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } };
    const { status, body } = await call('POST', `/api/environments/${tenant.project.id}/query/`, { query });
    expect(status).toBe(200);
    const counts = Object.fromEntries((body.results as { breakdown_value: string; count: number }[]).map((r) => [r.breakdown_value, r.count]));
    expect(counts).toEqual({ '7': 2, 'a"b\\c': 1, true: 1, $$_posthog_breakdown_null_$$: 3 });
  });
});

describe('dashboards from the built-in template', () => {
  const dashboards = () => `/api/environments/${tenant.project.id}/dashboards/`;

  it('use_template makes the Product analytics insights, and a read computes every tile', async () => {
    const created = await call('POST', dashboards(), { use_template: 'DEFAULT_APP', delete_insights: false });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Product analytics', creation_mode: 'template' });
    expect(created.body.tiles.map((t: { insight: { name: string } }) => t.insight.name)).toEqual([
      'Daily active users (DAUs)',
      'Weekly active users (WAUs)',
      'Retention',
      'Growth accounting',
      'Referring domains (last 14 days)',
      'Pageviews by path (last 14 days)',
    ]);

    const read = await call('GET', `${dashboards()}${created.body.id}/`);
    expect(read.status).toBe(200);
    for (const tile of read.body.tiles) {
      expect(tile.insight.query_status).toBeNull();
      expect(Array.isArray(tile.insight.result)).toBe(true);
      expect(tile).toMatchObject({ is_cached: false, last_refresh: expect.any(String) });
    }
    const again = await call('GET', `${dashboards()}${created.body.id}/`);
    expect(again.body.tiles.every((t: { is_cached: boolean }) => t.is_cached)).toBe(true);
  });

  it('refuses a template it does not have, naming use_template; makes an empty dashboard without one', async () => {
    const unknown = await call('POST', dashboards(), { use_template: 'Nope' });
    expect([unknown.status, unknown.body.attr]).toEqual([400, 'use_template']);
    const empty = await call('POST', dashboards(), { name: 'Empty' });
    expect(empty.status).toBe(201);
    expect(empty.body).toMatchObject({ name: 'Empty', creation_mode: 'default', tiles: [] });
  });
});
