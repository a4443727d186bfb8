import { randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS } from '@tributary/clickhouse';
import { readCount, readFunnel, seededRandom } from '@tributary/experiments';
import { EVENT_ROW_COLUMNS, createTestTenant, eventRow, replicasHold, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const path = (own = tenant) => `/api/projects/${own.project.id}/experiments/`;
const create = (body: Record<string, unknown>, own = tenant) => api.request('POST', path(own), own.personalApiKey, body);
const patch = (id: number, body: Record<string, unknown>) => api.request('PATCH', `${path()}${id}/`, tenant.personalApiKey, body);
const results = (id: number, query = '', own = tenant) => api.request('GET', `${path(own)}${id}/results/${query}`, own.personalApiKey);
const step = (event: string) => ({ kind: 'EventsNode', event });
const countMetric = (event: string) => ({ kind: 'ExperimentTrendsQuery', count_query: { kind: 'TrendsQuery', series: [step(event)] } });
const funnelMetric = (...events: string[]) => ({ kind: 'ExperimentFunnelsQuery', funnels_query: { kind: 'FunnelsQuery', series: events.map(step) } });

/**
 * The fixture, as plain data a reference reads without ClickHouse: 40 persons of this project,
 * each exposed (a `$feature_flag_called` of the flag) at some hour of March, with views and
 * purchases before and after; one also exposed to the other variant later; one exposed only
 * before the start; one whose purchases come from a second distinct id; and events of another
 * flag. The other project has the same flag key and distinct ids and far more of everything.
 */
interface Fixture {
  distinctId: string;
  person: string;
  event: string;
  at: string;
  properties?: Record<string, unknown>;
}

const START = '2024-03-01T00:00:00.000Z';
const END = '2024-03-31T00:00:00.000Z';
const hour = (h: number) => new Date(Date.parse('2024-03-02T00:00:00Z') + h * 3_600_000).toISOString().replace('T', ' ').slice(0, 19);

function fixture(flagKey: string): Fixture[] {
  const rows: Fixture[] = [];
  const exposure = (person: string, h: number, variant: string, distinctId = person, flag = flagKey) =>
    rows.push({ distinctId, person, event: '$feature_flag_called', at: hour(h), properties: { $feature_flag: flag, $feature_flag_response: variant } });
  const add = (person: string, event: string, h: number, distinctId = person) => rows.push({ distinctId, person, event, at: hour(h) });
  for (let i = 0; i < 40; i++) {
    const person = `p${i}`;
    const variant = i % 3 === 0 ? 'control' : 'test';
    add(person, 'purchase', 10 * i); // before exposure: not counted
    exposure(person, 10 * i + 1, variant);
    exposure(person, 10 * i + 2, variant); // a second exposure, same variant
    if (i % 2 === 0) add(person, 'view', 10 * i + 3);
    for (let k = 0; k < i % 4; k++) add(person, 'purchase', 10 * i + 4 + k);
  }
  exposure('p1', 500, 'control'); // p1 was in test first: seen in both variants
  exposure('early', -48, 'test'); // before the start: never exposed in the experiment
  add('early', 'purchase', 5);
  exposure('twin', 3, 'control', 'twin-web');
  add('twin', 'view', 4, 'twin-web');
  add('twin', 'purchase', 5, 'twin-phone');
  exposure('p5', 7, 'control', 'p5', 'another-flag');
  return rows;
}

/** The counts a plain reading of the fixture gives, as PostHog defines them. */
function reference(rows: Fixture[], flagKey: string, handling: 'exclude' | 'first_seen', steps: string[] | null) {
  const inDates = rows.filter((r) => r.at >= START.replace('T', ' ').slice(0, 19) && r.at <= END.replace('T', ' ').slice(0, 19));
  const isExposure = (r: Fixture) => r.event === '$feature_flag_called' && r.properties?.$feature_flag === flagKey && ['control', 'test'].includes(String(r.properties.$feature_flag_response));
  const byPerson = new Map<string, Fixture[]>();
  for (const r of inDates) byPerson.set(r.person, [...(byPerson.get(r.person) ?? []), r]);
  const out = new Map<string, { exposed: number; value: number }>([['control', { exposed: 0, value: 0 }], ['test', { exposed: 0, value: 0 }]]);
  for (const events of byPerson.values()) {
    const exposures = events.filter(isExposure).sort((a, b) => a.at.localeCompare(b.at));
    if (exposures.length === 0) continue;
    const seen = new Set(exposures.map((e) => e.properties!.$feature_flag_response));
    if (seen.size > 1 && handling === 'exclude') continue;
    const variant = out.get(String(exposures[0]!.properties!.$feature_flag_response))!;
    variant.exposed += 1;
    if (!steps) {
      variant.value += events.filter((e) => e.event === 'purchase' && e.at >= exposures[0]!.at).length;
      continue;
    }
    const window = 14 * 86_400_000;
    const converted = exposures.some((x) => {
      const limit = Date.parse(`${x.at}Z`) + window;
      let after = x.at;
      for (const s of steps) {
        const next = events.filter((e) => e.event === s && e.at > after && Date.parse(`${e.at}Z`) <= limit).sort((a, b) => a.at.localeCompare(b.at))[0];
        if (!next) return false;
        after = next.at;
      }
      return true;
    });
    if (converted) variant.value += 1;
  }
  return out;
}

async function insert(teamId: number, rows: Fixture[]): Promise<void> {
  const persons = [...new Set(rows.map((r) => r.person))];
  const ids = new Map(persons.map((p) => [p, randomUUID()]));
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, rows.map((r) => eventRow(teamId, r.distinctId, r.event, r.at, r.properties ?? {})));
  await api.clickhouse.insert('person', PERSON_COLUMNS, persons.map((p) => ({ id: ids.get(p), created_at: '2024-01-01 00:00:00', team_id: teamId, properties: '{}', is_identified: 1, is_deleted: 0, version: 1 })));
  const pairs = [...new Map(rows.map((r) => [r.distinctId, r.person])).entries()];
  await api.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, pairs.map(([d, p]) => ({ team_id: teamId, distinct_id: d, person_id: ids.get(p), is_deleted: 0, version: 1 })));
  await replicasHold(api.clickhouse, api.config, [teamId]);
}

const FLAG = uniqueName('checkout').replace(/[^a-zA-Z0-9_-]/g, '-');
/** Results read ClickHouse through the query layer; on a loaded machine the first can take minutes. */
const SLOW = 300_000;
const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  await insert(tenant.project.id, fixture(FLAG));
  // The other project: the same flag key and distinct ids, every person in test, buying a lot.
  const hostile = fixture(FLAG).map((r) => (r.properties?.$feature_flag_response ? { ...r, properties: { ...r.properties, $feature_flag_response: 'test' } } : r));
  await insert(other.project.id, [...hostile, ...hostile.filter((r) => r.event === 'purchase'), ...hostile.filter((r) => r.event === 'purchase')]);
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

  it('a count metric: exposed persons and purchases after their first exposure per variant, those in both variants left out', async () => {
    const response = await results(id);
    expect(response.status).toBe(200);
    const expected = reference(fixture(FLAG), FLAG, 'exclude', null);
    const variants = ['control', 'test'].map((key) => ({ key, count: expected.get(key)!.value, absolute_exposure: expected.get(key)!.exposed }));
    expect(response.body.variants.map(({ key, count, absolute_exposure }: Record<string, unknown>) => ({ key, count, absolute_exposure }))).toEqual(variants);
    expect(response.body.excluded_multiple_variant_count).toBe(1);
    const reading = readCount(variants[0]!, variants.slice(1), seededRandom(0x5eed));
    expect(response.body).toMatchObject({
      kind: 'ExperimentTrendsQuery',
      probability: reading.probability,
      credible_intervals: reading.credible_intervals,
      significant: false,
      significance_code: 'not_enough_exposure',
      p_value: 1,
      stats_version: 2,
    });
  }, SLOW);

  it('a funnel metric: persons who viewed then purchased after an exposure, within 14 days', async () => {
    const response = await results(id, '?metric_index=1');
    const expected = reference(fixture(FLAG), FLAG, 'exclude', ['view', 'purchase']);
    const variants = ['control', 'test'].map((key) => ({ key, success_count: expected.get(key)!.value, failure_count: expected.get(key)!.exposed - expected.get(key)!.value }));
    expect(response.body.variants).toEqual(variants);
    expect(variants.every((v) => v.success_count > 0 && v.failure_count > 0)).toBe(true);
    const reading = readFunnel(variants[0]!, variants.slice(1), seededRandom(0x5eed));
    expect(response.body).toMatchObject({ kind: 'ExperimentFunnelsQuery', probability: reading.probability, credible_intervals: reading.credible_intervals, significance_code: 'not_enough_exposure', expected_loss: 1 });
  }, SLOW);

  it('a secondary metric, and first_seen handling keeps the person seen in both variants in their first', async () => {
    await patch(id, { exposure_criteria: { multiple_variant_handling: 'first_seen' } });
    try {
      const response = await results(id, '?secondary=true');
      const expected = reference(fixture(FLAG), FLAG, 'first_seen', ['purchase']);
      expect(response.body.variants).toEqual(['control', 'test'].map((key) => ({ key, success_count: expected.get(key)!.value, failure_count: expected.get(key)!.exposed - expected.get(key)!.value })));
      expect(response.body.excluded_multiple_variant_count).toBe(0);
    } finally {
      await patch(id, { exposure_criteria: null });
    }
  }, SLOW);
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
  });

  it("reads only its own project's events: the same flag key and distinct ids elsewhere change nothing", async () => {
    // The other project's experiment on the same key sees its own (all test, three times the purchases).
    const theirs = await create({ name: 'theirs', feature_flag_key: FLAG, start_date: START, end_date: END, metrics: [countMetric('purchase')] }, other);
    const theirResults = (await results(theirs.body.id, '', other)).body;
    expect(theirResults.variants.find((v: { key: string }) => v.key === 'control').absolute_exposure).toBe(0);
    const own = await api.request('GET', `${path()}`, tenant.personalApiKey);
    const ownId = own.body.results.find((e: { name: string }) => e.name === 'results').id;
    const expected = reference(fixture(FLAG), FLAG, 'exclude', null);
    expect((await results(ownId)).body.variants.map((v: { count: number }) => v.count)).toEqual([expected.get('control')!.value, expected.get('test')!.value]);
  }, SLOW);
});
