import fc from 'fast-check';
import { createTestTenant, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';
import { insertFixture } from './insights-oracle/cases.js';
import { LEAK, PATHS_CASES, buildPathsFixture, expectedPaths } from './insights-oracle/paths-cases.js';
import type { Fixture } from './insights-oracle/fixture.js';

/**
 * The paths oracle on the stack's ClickHouse 18.16, through the query endpoint: each question's
 * edges must be the reference's, computed from the raw rows; the other project, holding the same
 * distinct ids on the same days, never shows. `paths-oracle-chdb.test.ts` asks ClickHouse 26.
 */
let api: ApiHarness;
let tenant: TestTenant;
const fixture: Fixture = buildPathsFixture();

const setup = useApi();
const query = (body: object, refresh = 'force_blocking') => api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: body, refresh });
beforeAll(async () => {
  ({ api, tenant } = setup);
  const other = await createTestTenant(api.pool, api.config);
  await insertFixture(api.clickhouse, tenant.project.id, fixture);
  await insertFixture(api.clickhouse, other.project.id, buildPathsFixture({ other: true }));
  await replicasHold(api.clickhouse, api.config, [tenant.project.id, other.project.id]);
});

describe('PathsQuery agrees with the reference computed from the raw rows', () => {
  it.each(PATHS_CASES)('%s', async (_name, request) => {
    const { status, body, text } = await query(request);
    expect({ status, error: status === 200 ? undefined : body }).toEqual({ status: 200 });
    expect(body.results).toEqual(expectedPaths(fixture, request));
    expect(text).not.toMatch(LEAK);
  });

  it('answers with the HogQL it ran, which runs as a HogQLQuery with the same edges', async () => {
    const request = PATHS_CASES[0]![1];
    const { body } = await query(request);
    const again = await query({ kind: 'HogQLQuery', query: body.hogql });
    expect([again.status, again.body.detail]).toEqual([200, undefined]);
    expect(again.body.results.map(([source, target, value]: unknown[]) => ({ source, target, value }))).toEqual(body.results.map(({ source, target, value }: Record<string, unknown>) => ({ source, target, value })));
  });

  it('is cached by the query: the same question again is answered from the cache, another one is not', async () => {
    const request = { ...PATHS_CASES[0]![1], pathsFilter: { includeEventTypes: ['$pageview'], stepLimit: 7 } };
    const first = await query(request, 'blocking');
    const second = await query(request, 'blocking');
    expect([first.body.is_cached, second.body.is_cached]).toEqual([false, true]);
    expect(second.body.results).toEqual(first.body.results);
    const other = await query({ ...request, pathsFilter: { ...request.pathsFilter, stepLimit: 6 } }, 'force_cache');
    expect(other.body.results).toBeNull();
  });
});

describe('PathsQuery refuses what it cannot run with a 400 naming the problem', () => {
  const refused: [string, object, string][] = [
    ['a step limit over 20', { stepLimit: 21 }, 'query.pathsFilter.stepLimit'],
    ['an unknown event type', { includeEventTypes: ['$autocapture'] }, 'query.pathsFilter.includeEventTypes[0]'],
    ['an edge limit over 1000', { edgeLimit: 5000 }, 'query.pathsFilter.edgeLimit'],
    ['too many cleaning rules', { localPathCleaningFilters: Array.from({ length: 31 }, () => ({ regex: 'a', alias: 'b' })) }, 'query.pathsFilter.localPathCleaningFilters'],
    ['a cleaning rule too long', { localPathCleaningFilters: [{ regex: 'a'.repeat(501), alias: 'b' }] }, 'query.pathsFilter.localPathCleaningFilters[0].regex'],
    ['a cleaning rule RE2 cannot run (a back-reference)', { localPathCleaningFilters: [{ regex: '(a)\\1', alias: 'b' }] }, 'query'],
    ['a cleaning rule that is no regex', { localPathCleaningFilters: [{ regex: '(', alias: 'b' }] }, 'query'],
    ['a cleaning rule without a regex', { localPathCleaningFilters: [{ alias: 'b' }] }, 'query'],
    ['weights that make no range', { minEdgeWeight: 5, maxEdgeWeight: 2 }, 'query'],
    ['an aggregate as the step expression', { includeEventTypes: ['hogql'], pathsHogQLExpression: 'count()' }, 'query'],
    ['a step expression that does not parse', { includeEventTypes: ['hogql'], pathsHogQLExpression: 'properties.$pathname +' }, 'query'],
  ];
  it.each(refused)('%s', async (_name, pathsFilter, attr) => {
    const { status, body } = await query({ kind: 'PathsQuery', pathsFilter, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' } });
    expect({ status, attr: body.attr }).toEqual({ status: 400, attr });
    expect(body.detail).toEqual(expect.any(String));
  });

  it('refuses the paths of a funnel (funnelPathsFilter), which it does not build', async () => {
    const { status, body } = await query({ kind: 'PathsQuery', pathsFilter: {}, funnelPathsFilter: { funnelPathType: 'funnel_path_after_step', funnelStep: 1, funnelSource: { kind: 'FunnelsQuery', series: [] } } });
    expect(status).toBe(400);
    expect(body.detail).toContain('funnelPathsFilter');
  });

  it('a step expression reads only the project\'s rows: a subquery of another table is guarded too', async () => {
    const { status, text } = await query({ kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: '(SELECT any(properties.$current_url) FROM events)' }, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' } });
    expect([200, 400]).toContain(status);
    expect(text).not.toMatch(LEAK);
  });
});

describe("the other project's steps never show, whatever the question", () => {
  // The other project's rows share distinct ids and minutes with this one's: any leak is a step of theirs inside a path here.
  const pathsFilter = fc.record(
    {
      includeEventTypes: fc.subarray(['$pageview', '$screen', 'custom_event', 'hogql'] as const),
      pathsHogQLExpression: fc.constantFrom('properties.$pathname', 'distinct_id', 'event'),
      startPoint: fc.constantFrom('https://shop.test/', 'https://leak.test/secret', 'leak_event'),
      endPoint: fc.constantFrom('https://shop.test/checkout', 'https://leak.test/x', 'Leak'),
      stepLimit: fc.integer({ min: 1, max: 20 }),
      excludeEvents: fc.subarray(['signup', '$pageview', 'https://shop.test/pricing']),
      localPathCleaningFilters: fc.constantFrom([{ regex: 'shop', alias: 'store' }], [{ regex: '.*', alias: '' }], [{ regex: 'https://', alias: '' }]),
      pathGroupings: fc.constantFrom(['*'], ['https://shop.test/*'], ['*.test*']),
      edgeLimit: fc.integer({ min: 1, max: 100 }),
    },
    { requiredKeys: [] },
  );
  const properties = fc.constantFrom([], [{ key: '$browser', value: 'Chrome' }], [{ key: '$current_url', operator: 'icontains', value: 'leak' }], [{ key: '$pathname', operator: 'regex', value: '^/p' }]);

  it('every generated PathsQuery answers from the project\'s own rows', async () => {
    await fc.assert(
      fc.asyncProperty(pathsFilter, properties, async (filter, props) => {
        const { status, body } = await query({ kind: 'PathsQuery', pathsFilter: filter, properties: props, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' } });
        expect(status).toBe(200);
        // The results only: the answer's hogql repeats the question, which may name their pages.
        expect(JSON.stringify(body.results)).not.toMatch(LEAK);
      }),
      { numRuns: 25 },
    );
  });
});
