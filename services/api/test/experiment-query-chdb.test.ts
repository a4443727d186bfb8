import { randomInt } from 'node:crypto';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import type { ExperimentRow } from '../src/experiments/experiment-store.js';
import type { InsightCache } from '../src/query/insight-cache.js';
import type { QueryRequest, QueryService } from '../src/query/query-service.js';
import { uncachedQueryService } from './uncached-query-service.js';
import { END, START, VARIANTS, experimentFixture, funnelReference, hostileFixture, insertFixture, trendsReference } from './experiment-oracle.js';

/**
 * ExperimentTrendsQuery and ExperimentFunnelsQuery on a current ClickHouse (chdb's in-process
 * 26.x), printed by the query service as for any server: the reference's counts, as on 18.16
 * (`experiments.integration.test.ts`), and nothing of another project with the same flag key,
 * distinct ids and experiment.
 */
const TEAM = 810_000_000 + randomInt(90_000_000);
const OTHER = TEAM + 1;
const FLAG = 'checkout';
const EXPERIMENT = 7;

/** Experiments as the store keeps them: each in its project, found by id only there. */
const stored = new Map<string, ExperimentRow>(
  [TEAM, OTHER].map((team) => [
    `${team}/${EXPERIMENT}`,
    { id: EXPERIMENT, team_id: team, start_date: new Date(START), end_date: new Date(END), feature_flag: { id: 1, key: FLAG, filters: { multivariate: { variants: VARIANTS.map((key) => ({ key, rollout_percentage: 50 })) } } } } as unknown as ExperimentRow,
  ]),
);
const experiments = { get: async (teamId: number, id: number) => stored.get(`${teamId}/${id}`) ?? null };
const step = (event: string) => ({ kind: 'EventsNode', event });

let clickhouse: ChdbClickHouse;
let service: QueryService;
beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
  await insertFixture(clickhouse, TEAM, experimentFixture(FLAG));
  await insertFixture(clickhouse, OTHER, hostileFixture(FLAG));
  const cache = {} as InsightCache;
  service = uncachedQueryService(clickhouse, { cache, experiments });
});
afterAll(() => clickhouse.close());

const countsOf = (body: Record<string, any>) => (body.variants as Record<string, unknown>[]).map(({ key, count, absolute_exposure }) => ({ key, count, absolute_exposure }));
const ask = (request: object, team = TEAM) => service.run({ id: team, timezone: 'UTC' }, request as QueryRequest, new AbortController().signal) as Promise<Record<string, any>>;

describe('experiment query kinds agree with the reference on ClickHouse 26', () => {
  it('ExperimentTrendsQuery: purchases sent under each variant, persons exposed by $feature_flag_called', async () => {
    const reply = await ask({ kind: 'ExperimentTrendsQuery', experiment_id: EXPERIMENT, count_query: { kind: 'TrendsQuery', series: [step('purchase')] } });
    expect(countsOf(reply)).toEqual(trendsReference(experimentFixture(FLAG), FLAG, 'purchase'));
  });

  it('ExperimentTrendsQuery with an exposure_query: persons with its event sent under a variant', async () => {
    const reply = await ask({ kind: 'ExperimentTrendsQuery', experiment_id: EXPERIMENT, count_query: { kind: 'TrendsQuery', series: [step('purchase')] }, exposure_query: { kind: 'TrendsQuery', series: [step('view')] } });
    expect(countsOf(reply)).toEqual(trendsReference(experimentFixture(FLAG), FLAG, 'purchase', 'view'));
  });

  it('ExperimentFunnelsQuery: persons from a view sent under a variant to a purchase within 14 days', async () => {
    const reply = await ask({ kind: 'ExperimentFunnelsQuery', experiment_id: EXPERIMENT, funnels_query: { kind: 'FunnelsQuery', series: [step('view'), step('purchase')] } });
    const expected = funnelReference(experimentFixture(FLAG), FLAG, ['view', 'purchase']);
    expect(reply.variants).toEqual(expected.map(({ key, steps }) => ({ key, success_count: steps[1], failure_count: steps[0]! - steps[1]! })));
    expect(reply.insight.map((variant: { count: number }[]) => variant.map((s) => s.count))).toEqual(expected.map((v) => v.steps));
  });

  it("property filters on the metric's series and on a funnel's step count only the events that match them", async () => {
    const pro = [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }];
    const isPro = (r: { properties?: Record<string, unknown> }) => r.properties?.plan === 'pro';
    const counted = await ask({ kind: 'ExperimentTrendsQuery', experiment_id: EXPERIMENT, count_query: { kind: 'TrendsQuery', series: [{ ...step('purchase'), properties: pro }] } });
    const expected = trendsReference(experimentFixture(FLAG), FLAG, 'purchase', undefined, isPro);
    expect(expected.every((v) => v.count > 0)).toBe(true);
    expect(countsOf(counted)).toEqual(expected);
    const funnel = await ask({ kind: 'ExperimentFunnelsQuery', experiment_id: EXPERIMENT, funnels_query: { kind: 'FunnelsQuery', series: [step('view'), { ...step('purchase'), properties: pro }] } });
    const steps = funnelReference(experimentFixture(FLAG), FLAG, ['view', 'purchase'], 14 * 24, [() => true, isPro]);
    expect(funnel.insight.map((variant: { count: number }[]) => variant.map((s) => s.count))).toEqual(steps.map((v) => v.steps));
  });

  it('a property filter that cannot be read is refused as a query error', async () => {
    await expect(ask({ kind: 'ExperimentTrendsQuery', experiment_id: EXPERIMENT, count_query: { kind: 'TrendsQuery', series: [{ ...step('purchase'), properties: [{ key: 'plan', operator: 'no_such_operator', type: 'event' }] }] } })).rejects.toMatchObject({ status: 400 });
  });

  it("another project's experiment of the same id reads that project's rows only", async () => {
    const reply = await ask({ kind: 'ExperimentTrendsQuery', experiment_id: EXPERIMENT, count_query: { kind: 'TrendsQuery', series: [step('purchase')] } }, OTHER);
    expect(countsOf(reply)).toEqual(trendsReference(hostileFixture(FLAG), FLAG, 'purchase'));
  });
});
