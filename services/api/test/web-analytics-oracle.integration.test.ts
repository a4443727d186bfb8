import fc from 'fast-check';
import { createTestTenant, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';
import { insertFixture } from './insights-oracle/cases.js';
import { LEAK, WEB_CASES, buildWebFixture } from './insights-oracle/web-cases.js';
import { referenceWebOverview, referenceWebStats } from './insights-oracle/web-reference.js';

/**
 * The web analytics oracle on the stack's ClickHouse 18.16, through the query endpoint: each
 * answer must be the reference's, computed from the raw rows; the other project, holding the same
 * session ids and distinct ids on the same days, never shows. `web-analytics-oracle-chdb.test.ts`
 * asks ClickHouse 26.
 */
let api: ApiHarness;
let tenant: TestTenant;
const fixture = buildWebFixture();

const setup = useApi();
const query = (body: object, refresh = 'force_blocking') => api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: body, refresh });
const RANGE = { date_from: '2024-05-08', date_to: '2024-05-14' };
beforeAll(async () => {
  ({ api, tenant } = setup);
  const other = await createTestTenant(api.pool, api.config);
  await insertFixture(api.clickhouse, tenant.project.id, fixture);
  await insertFixture(api.clickhouse, other.project.id, buildWebFixture({ other: true }));
  await replicasHold(api.clickhouse, api.config, [tenant.project.id, other.project.id]);
});

describe('the web analytics kinds agree with the reference computed from the raw rows', () => {
  it.each(WEB_CASES)('%s', async (_name, request) => {
    const { status, body, text } = await query(request);
    expect({ status, error: status === 200 ? undefined : body }).toEqual({ status: 200 });
    if (request.kind === 'WebOverviewQuery') expect(body.results).toEqual(referenceWebOverview(fixture.world, request));
    else expect({ results: body.results, hasMore: body.hasMore }).toEqual(referenceWebStats(fixture.world, request));
    expect(JSON.stringify(body.results)).not.toMatch(LEAK);
    expect(text).not.toMatch(/leak\.test/);
  });

  it("answers a stats table in PostHog's columns, with the HogQL it ran, which runs as a HogQLQuery", async () => {
    const { body } = await query({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialChannelType', dateRange: RANGE });
    expect(body.columns).toEqual(['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views', 'context.columns.bounce_rate']);
    const again = await query({ kind: 'HogQLQuery', query: body.hogql });
    expect([again.status, again.body.detail]).toEqual([200, undefined]);
    expect(again.body.results.map((row: unknown[]) => row[0])).toEqual(body.results.map((row: unknown[]) => row[0]));
  });

  it('is cached by the query: the same question again is answered from the cache', async () => {
    const request = { kind: 'WebOverviewQuery', dateRange: { date_from: '2024-05-09', date_to: '2024-05-14' }, compareFilter: { compare: true } };
    const first = await query(request, 'blocking');
    const second = await query(request, 'blocking');
    expect([first.body.is_cached, second.body.is_cached]).toEqual([false, true]);
    expect(second.body.results).toEqual(first.body.results);
  });
});

describe('the sessions table reads the project alone', () => {
  it('SELECT * FROM sessions holds only its sessions, whole', async () => {
    const { status, body, text } = await query({ kind: 'HogQLQuery', query: "SELECT session_id, $pageview_count, $entry_pathname, $channel_type FROM sessions WHERE session_id IN ('s-ann-1', 's-ann-2', 's-ben-1') ORDER BY session_id" });
    expect(status).toBe(200);
    expect(body.results).toEqual([['s-ann-1', 2, '/', 'Direct'], ['s-ann-2', 1, '/product/1', 'Organic Search'], ['s-ben-1', 2, '/', 'Paid Search']]);
    expect(text).not.toMatch(LEAK);
  });

  it('joined to events, in a subquery and after IN', async () => {
    for (const hogql of [
      'SELECT e.event, s.$entry_current_url, s.$channel_type FROM events AS e JOIN sessions AS s ON e.$session_id = s.session_id',
      'SELECT * FROM (SELECT session_id, $entry_referring_domain FROM sessions) WHERE 1 = 1',
      'SELECT properties FROM events WHERE $session_id IN (SELECT session_id FROM sessions WHERE $pageview_count > 0)',
    ]) {
      const { status, text } = await query({ kind: 'HogQLQuery', query: hogql });
      expect([hogql, status]).toEqual([hogql, 200]);
      expect(text).not.toMatch(LEAK);
    }
  });
});

describe('the web analytics kinds refuse what they cannot run with a 400 naming the problem', () => {
  const refused: [string, object, string][] = [
    ['an unknown breakdown', { kind: 'WebStatsTableQuery', breakdownBy: 'Planet' }, 'query.breakdownBy'],
    ['no breakdown', { kind: 'WebStatsTableQuery' }, 'query.breakdownBy'],
    ['a limit over 1000', { kind: 'WebStatsTableQuery', breakdownBy: 'Page', limit: 5000 }, 'query.limit'],
    ['a conversion goal', { kind: 'WebOverviewQuery', conversionGoal: { actionId: 1 } }, 'query.conversionGoal'],
    ['a date that is none', { kind: 'WebOverviewQuery', dateRange: { date_from: 'yesterday-ish' } }, 'query'],
    ['a range ending before it starts', { kind: 'WebOverviewQuery', dateRange: { date_from: '2024-05-10', date_to: '2024-05-01' } }, 'query'],
    ['a property filter without a key', { kind: 'WebOverviewQuery', properties: [{ value: 'x' }] }, 'query.properties[0].key'],
    ['a session property that is no session column', { kind: 'WebOverviewQuery', properties: [{ key: 'plan', type: 'session', value: 'x' }] }, 'properties'],
    ['a session property filter with an unknown operator', { kind: 'WebStatsTableQuery', breakdownBy: 'Page', properties: [{ key: '$channel_type', type: 'session', operator: 'nearly', value: 'x' }] }, 'properties'],
  ];
  it.each(refused)('%s', async (_name, request, attr) => {
    const { status, body } = await query(request);
    expect({ status, attr: body.attr }).toEqual({ status: 400, attr });
    expect(body.detail).toEqual(expect.any(String));
  });
});

describe("the other project's sessions never show, whatever the question", () => {
  const breakdowns = ['Page', 'InitialPage', 'ExitPage', 'InitialReferringDomain', 'InitialChannelType', 'InitialUTMSource', 'DeviceType', 'Browser', 'Country'];
  const properties = fc.constantFrom([], [{ key: '$browser', value: 'LeakBrowser' }], [{ key: '$pathname', operator: 'icontains', value: 'leak' }], [{ key: '$device_type', value: 'Mobile' }], [{ key: 'utm_source', operator: 'is_set' }], [{ key: '$entry_pathname', type: 'session', operator: 'icontains', value: 'leak' }], [{ key: '$channel_type', type: 'session', value: 'Referral' }]);
  const range = fc.constantFrom(RANGE, { date_from: '2024-05-01', date_to: '2024-05-31' }, { date_from: '2024-05-12', date_to: '2024-05-12' });
  const request = fc.oneof(
    fc.record({ kind: fc.constant('WebOverviewQuery'), dateRange: range, properties, compareFilter: fc.record({ compare: fc.boolean() }) }),
    fc.record({ kind: fc.constant('WebStatsTableQuery'), breakdownBy: fc.constantFrom(...breakdowns), dateRange: range, properties, compareFilter: fc.record({ compare: fc.boolean() }), limit: fc.integer({ min: 1, max: 50 }) }),
  );

  it('every generated web analytics query answers from the project\'s own rows', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (generated) => {
        const { status, body } = await query(generated);
        expect(status).toBe(200);
        // The results only: the answer's hogql repeats the question, which may name their values.
        expect(JSON.stringify(body.results)).not.toMatch(LEAK);
      }),
      { numRuns: 25 },
    );
  });
});
