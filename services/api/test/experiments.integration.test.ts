import { createKey, createTestTenant, replicasHold, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';
import { END, START, experimentFixture, funnelReference, hostileFixture, insertFixture, trendsReference, type FixtureEvent } from './experiment-oracle.js';

let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const path = (own = tenant) => `/api/projects/${own.project.id}/experiments/`;
const create = (body: Record<string, unknown>, own = tenant) => api.request('POST', path(own), own.personalApiKey, body);
const patch = (id: number, body: Record<string, unknown>) => api.request('PATCH', `${path()}${id}/`, tenant.personalApiKey, body);
const results = (id: number, query = '', own = tenant) => api.request('GET', `${path(own)}${id}/results/${query}`, own.personalApiKey);
const query = (body: Record<string, unknown>, own = tenant) => api.request('POST', `/api/projects/${own.project.id}/query/`, own.personalApiKey, { query: body });
const step = (event: string) => ({ kind: 'EventsNode', event });
const countMetric = (event: string) => ({ kind: 'ExperimentTrendsQuery', count_query: { kind: 'TrendsQuery', series: [step(event)] } });
const funnelMetric = (...events: string[]) => ({ kind: 'ExperimentFunnelsQuery', funnels_query: { kind: 'FunnelsQuery', series: events.map(step) } });
const countsOf = (body: { variants: Record<string, unknown>[] }) => body.variants.map(({ key, count, absolute_exposure }) => ({ key, count, absolute_exposure }));

async function insert(teamId: number, rows: FixtureEvent[]): Promise<void> {
  await insertFixture(api.clickhouse, teamId, rows);
  await replicasHold(api.clickhouse, api.config, [teamId]);
}

const FLAG = uniqueName('checkout').replace(/[^a-zA-Z0-9_-]/g, '-');
/** Results read ClickHouse through the query layer; on a loaded machine the first can take minutes. */
const SLOW = 300_000;
const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  await insert(tenant.project.id, experimentFixture(FLAG));
  await insert(other.project.id, hostileFixture(FLAG));
});

describe('experiments: create, read, change, delete', () => {
  it("creates the flag with control and test variants, off until launch, and answers in PostHog's shape", async () => {
    const created = await create({ name: 'Checkout', feature_flag_key: uniqueName('new-flag').replace(/[^a-zA-Z0-9_-]/g, '-'), parameters: { minimum_detectable_effect: 5 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(Number),
      name: 'Checkout',
      description: '',
      start_date: null,
      end_date: null,
      archived: false,
      metrics: [],
      metrics_secondary: [],
      parameters: { minimum_detectable_effect: 5, feature_flag_variants: [{ key: 'control', name: 'Control Group', rollout_percentage: 50 }, { key: 'test', name: 'Test Variant', rollout_percentage: 50 }] },
      feature_flag: { key: created.body.feature_flag_key, active: false, team_id: tenant.project.id, name: 'Feature Flag for Experiment Checkout' },
    });
    expect(created.body.feature_flag.filters.multivariate.variants.map((v: { key: string }) => v.key)).toEqual(['control', 'test']);
    const launched = await patch(created.body.id, { start_date: START, description: 'go' });
    expect(launched.body).toMatchObject({ start_date: START, description: 'go', feature_flag: { active: true } });
    expect((await api.request('GET', `${path()}`, tenant.personalApiKey)).body.results.map((e: { id: number }) => e.id)).toContain(created.body.id);
    expect((await api.request('DELETE', `${path()}${created.body.id}/`, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', `${path()}${created.body.id}/`, tenant.personalApiKey)).status).toBe(404);
    // The flag stays.
    expect((await api.request('GET', `/api/projects/${tenant.project.id}/feature_flags/${created.body.feature_flag.id}/`, tenant.personalApiKey)).status).toBe(200);
  });

  it('links a multivariate flag of the project with the same key, and refuses one without variants', async () => {
    const key = uniqueName('mv').replace(/[^a-zA-Z0-9_-]/g, '-');
    const variants = [{ key: 'control', rollout_percentage: 34 }, { key: 'a', rollout_percentage: 33 }, { key: 'b', rollout_percentage: 33 }];
    const flag = await api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, { key, filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants } } });
    const linked = await create({ name: 'three ways', feature_flag_key: key });
    expect(linked.body).toMatchObject({ feature_flag: { id: flag.body.id }, parameters: { feature_flag_variants: variants } });
    const plainKey = uniqueName('plain').replace(/[^a-zA-Z0-9_-]/g, '-');
    await api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, { key: plainKey, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
    expect((await create({ name: 'x', feature_flag_key: plainKey })).body).toMatchObject({ attr: 'feature_flag_key', detail: expect.stringMatching(/not multivariate/) });
  });

  it.each([
    [{ feature_flag_key: 'k' }, 'name'],
    [{ name: 'x' }, 'feature_flag_key'],
    [{ name: 'x', feature_flag_key: 'bad key!' }, 'feature_flag_key'],
    [{ name: 'x', feature_flag_key: 'k1', parameters: { feature_flag_variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } }, 'parameters.feature_flag_variants'],
    [{ name: 'x', feature_flag_key: 'k2', parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 100 }] } }, 'parameters.feature_flag_variants'],
    [{ name: 'x', feature_flag_key: 'k3', parameters: { feature_flag_variants: Array.from({ length: 11 }, (_, i) => ({ key: i === 0 ? 'control' : `v${i}`, rollout_percentage: i === 0 ? 0 : 10 })) } }, 'parameters.feature_flag_variants'],
    [{ name: 'x', feature_flag_key: 'k4', parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 60 }, { key: 'test', rollout_percentage: 60 }] } }, 'parameters.feature_flag_variants'],
    [{ name: 'x', feature_flag_key: 'k5', metrics: Array.from({ length: 11 }, () => countMetric('purchase')) }, 'metrics'],
    [{ name: 'x', feature_flag_key: 'k6', metrics_secondary: [{ kind: 'ExperimentFunnelsQuery', funnels_query: { series: [] } }] }, 'metrics_secondary'],
    [{ name: 'x', feature_flag_key: 'k7', metrics: [{ kind: 'TrendsQuery' }] }, 'metrics'],
    [{ name: 'x', feature_flag_key: 'k8', start_date: '2024-03-10', end_date: '2024-03-01' }, 'end_date'],
    [{ name: 'x', feature_flag_key: 'k9', start_date: 'soon' }, 'start_date'],
    [{ name: 'x', feature_flag_key: 'k10', exposure_criteria: { multiple_variant_handling: 'all' } }, 'exposure_criteria'],
  ])('refuses %j with a 400 naming %s', async (body, attr) => {
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(String(response.body.attr)).toContain(attr);
  });

  it("refuses to change the flag key or the variants, and reads no results before launch", async () => {
    const created = await create({ name: 'draft', feature_flag_key: uniqueName('draft').replace(/[^a-zA-Z0-9_-]/g, '-'), metrics: [countMetric('purchase')] });
    expect((await patch(created.body.id, { feature_flag_key: 'other' })).body).toMatchObject({ attr: 'feature_flag_key' });
    expect((await patch(created.body.id, { parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 10 }, { key: 'test', rollout_percentage: 90 }] } })).body).toMatchObject({ attr: 'parameters.feature_flag_variants' });
    expect((await results(created.body.id)).body).toMatchObject({ attr: 'start_date', code: 'experiment_not_started' });
    expect((await results(created.body.id, '?metric_index=3')).body).toMatchObject({ attr: 'metric_index' });
  });
});

describe('experiment results on fixture events, against a plain reading of them', () => {
  let id: number;
  beforeAll(async () => {
    const created = await create({
      name: 'results',
      feature_flag_key: FLAG,
      start_date: START,
      end_date: END,
      metrics: [countMetric('purchase'), funnelMetric('view', 'purchase')],
      metrics_secondary: [funnelMetric('purchase')],
    });
    expect(created.status).toBe(201);
    id = created.body.id;
  });

  it("the results endpoint answers a count metric as PostHog's ExperimentTrendsQuery: purchases sent under each variant, persons exposed to it", async () => {
    const response = await results(id);
    expect(response.status).toBe(200);
    expect(countsOf(response.body)).toEqual(trendsReference(experimentFixture(FLAG), FLAG, 'purchase'));
    expect(response.body).toMatchObject({
      kind: 'ExperimentTrendsQuery',
      significant: false,
      significance_code: 'not_enough_exposure',
      p_value: 1,
      stats_version: 2,
      count_query: { breakdownFilter: { breakdown: `$feature/${FLAG}` }, dateRange: { date_from: START, date_to: END } },
      exposure_query: { series: [{ event: '$feature_flag_called', math: 'dau' }], breakdownFilter: { breakdown: '$feature_flag_response' } },
    });
    expect(Object.keys(response.body.probability)).toEqual(['control', 'test']);
    expect(response.body.insight.map((s: { breakdown_value: string; count: number }) => [s.breakdown_value, s.count])).toEqual(countsOf(response.body).map((v) => [v.key, v.count]));
  }, SLOW);

  it('a funnel metric: persons from a view sent under a variant to a purchase within 14 days', async () => {
    const response = await results(id, '?metric_index=1');
    const expected = funnelReference(experimentFixture(FLAG), FLAG, ['view', 'purchase']);
    expect(response.body.variants).toEqual(expected.map(({ key, steps }) => ({ key, success_count: steps[1], failure_count: steps[0]! - steps[1]! })));
    expect(response.body.variants.every((v: { success_count: number; failure_count: number }) => v.success_count > 0 && v.failure_count > 0)).toBe(true);
    expect(response.body).toMatchObject({ kind: 'ExperimentFunnelsQuery', significance_code: 'not_enough_exposure', expected_loss: 1, funnels_query: { breakdownFilter: { breakdown: `$feature/${FLAG}` } } });
  }, SLOW);

  it('a secondary metric, by its index among the secondary ones', async () => {
    const response = await results(id, '?secondary=true');
    const expected = funnelReference(experimentFixture(FLAG), FLAG, ['purchase']);
    expect(response.body.variants).toEqual(expected.map(({ key, steps }) => ({ key, success_count: steps[0], failure_count: 0 })));
  }, SLOW);

  it('the query endpoint runs both kinds for the experiment_id, with the answers of the results endpoint', async () => {
    const trends = await query({ ...countMetric('purchase'), experiment_id: id });
    expect(trends.status).toBe(200);
    const { last_refresh: _, ...fromResults } = (await results(id)).body;
    expect(trends.body).toMatchObject(fromResults);
    const funnels = await query({ ...funnelMetric('view', 'purchase'), experiment_id: id });
    expect(funnels.body.variants).toEqual((await results(id, '?metric_index=1')).body.variants);
  }, SLOW);

  it("an exposure_query counts persons with its event sent under a variant as exposed, instead of $feature_flag_called", async () => {
    const response = await query({ ...countMetric('purchase'), exposure_query: { kind: 'TrendsQuery', series: [step('view')] }, experiment_id: id });
    expect(countsOf(response.body)).toEqual(trendsReference(experimentFixture(FLAG), FLAG, 'purchase', 'view'));
  }, SLOW);

  it("property filters on the metric's series count only the events that match them", async () => {
    const pro = [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }];
    const response = await query({ kind: 'ExperimentTrendsQuery', count_query: { kind: 'TrendsQuery', series: [{ ...step('purchase'), properties: pro }] }, experiment_id: id });
    expect(countsOf(response.body)).toEqual(trendsReference(experimentFixture(FLAG), FLAG, 'purchase', undefined, (r) => r.properties?.plan === 'pro'));
  }, SLOW);

  it("needs experiment:read on the query endpoint as on the results endpoint, and is not kept as a saved insight", async () => {
    const queryOnly = await createKey(api.pool, api.config, tenant.user.id, ['query:read', 'insight:write']);
    const asked = await api.request('POST', `/api/projects/${tenant.project.id}/query/`, queryOnly, { query: { ...countMetric('purchase'), experiment_id: id } });
    expect(asked.status).toBe(403);
    expect(asked.body.detail).toContain('experiment:read');
    const saved = await api.request('POST', `/api/projects/${tenant.project.id}/insights/`, tenant.personalApiKey, { name: 'x', query: { ...countMetric('purchase'), experiment_id: id } });
    expect(saved.status).toBe(400);
    expect(saved.body.attr).toBe('query.kind');
  });

  it.each([
    [{ ...countMetric('purchase') }, 'experiment_id'],
    [{ ...countMetric('purchase'), experiment_id: 2_000_000_000 }, 'experiment_id'],
    [{ ...countMetric('purchase'), experiment_id: 'one' }, 'experiment_id'],
    [{ kind: 'ExperimentTrendsQuery', count_query: { kind: 'TrendsQuery', series: [step('a'), step('b')] }, experiment_id: 1 }, 'count_query'],
    [{ kind: 'ExperimentFunnelsQuery', funnels_query: { kind: 'FunnelsQuery', series: [] }, experiment_id: 1 }, 'funnels_query'],
    [{ kind: 'ExperimentTrendsQuery', count_query: { kind: 'TrendsQuery', series: [{ ...step('purchase'), math: 'sum' }] }, experiment_id: 1 }, 'count_query.series[0].math'],
    [{ kind: 'ExperimentTrendsQuery', count_query: { kind: 'TrendsQuery', series: [step('purchase')] }, exposure_query: { kind: 'TrendsQuery', series: [{ ...step('view'), math: 'total' }] }, experiment_id: 1 }, 'exposure_query.series[0].math'],
  ])('refuses %j with a 400 naming %s', async (body, attr) => {
    const response = await query(body);
    expect(response.status).toBe(400);
    expect(String(response.body.attr)).toContain(attr);
  });
});

describe('a hostile tenant', () => {
  it("cannot reach another project's flag by its key: the experiment gets a flag of its own project, the other's untouched", async () => {
    const key = uniqueName('theirs').replace(/[^a-zA-Z0-9_-]/g, '-');
    const theirs = await api.request('POST', `/api/projects/${other.project.id}/feature_flags/`, other.personalApiKey, { key, filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] } } });
    const mine = await create({ name: 'mine', feature_flag_key: key });
    expect(mine.body.feature_flag).toMatchObject({ team_id: tenant.project.id });
    expect(mine.body.feature_flag.id).not.toBe(theirs.body.id);
    expect((await api.request('GET', `/api/projects/${other.project.id}/experiments/${mine.body.id}/`, other.personalApiKey)).status).toBe(404);
    expect((await results(mine.body.id, '', other)).status).toBe(404);
    // Named in a query kind, the experiment of another project is not found either.
    const asked = await query({ ...countMetric('purchase'), experiment_id: mine.body.id }, other);
    expect(asked.status).toBe(400);
    expect(asked.body).toMatchObject({ attr: 'experiment_id', code: 'experiment_not_found' });
  });

  it("reads only its own project's events: the same flag key and distinct ids elsewhere change nothing", async () => {
    // The other project's experiment on the same key sees its own (all test, three times the purchases).
    const theirs = await create({ name: 'theirs', feature_flag_key: FLAG, start_date: START, end_date: END, metrics: [countMetric('purchase')] }, other);
    const theirResults = (await results(theirs.body.id, '', other)).body;
    expect(countsOf(theirResults)).toEqual(trendsReference(hostileFixture(FLAG), FLAG, 'purchase'));
    const own = await api.request('GET', `${path()}`, tenant.personalApiKey);
    const ownId = own.body.results.find((e: { name: string }) => e.name === 'results').id;
    expect(countsOf((await query({ ...countMetric('purchase'), experiment_id: ownId })).body)).toEqual(trendsReference(experimentFixture(FLAG), FLAG, 'purchase'));
  }, SLOW);
});
