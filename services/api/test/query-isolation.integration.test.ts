import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, createTestTenant, eventRow, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

/**
 * Every reader of ClickHouse the api has, driven by a project with generated property filters of
 * every type (event, person, group, cohort, element), never answers with another project's rows.
 * The other project shares the project's distinct ids, person id, group key, event names and days,
 * at higher versions, with marker values everywhere, so a missing guard anywhere shows in an answer.
 */
let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;
const cohorts: { own: number[]; theirs: number[] } = { own: [], theirs: [] };

const MARKER = 'other-project-secret';
/** A value the other project's rows hold beside the marker, for filters to match them by: never echoed as the marker is. */
const THEIRS = 'their-value';
const otherUuids = [randomUUID(), randomUUID(), randomUUID()];
const person = { alice: randomUUID(), bob: randomUUID() };
const day = (d: number, hour = 12) => `2024-01-0${d} ${hour}:00:00`;
const range = { date_from: '2024-01-01', date_to: '2024-01-03' };
/** A pageview's session and page: the other project's share the project's session ids, their pages named by the marker. */
const page = (session: string, path: string) => ({ $session_id: session, $current_url: `https://shop.test${path}`, $pathname: path });

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  const [own, theirs] = [tenant.project.id, other.project.id];
  const chain = (text: string) => `button.cta:href="/pricing"nth-child="1"text="${text}";div.main`;
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
    eventRow(own, 'alice', '$pageview', day(1), { $browser: 'Chrome', plan: 'pro', amount: 5, ...page('alice', '/pricing') }, { person_id: person.alice, person_properties: JSON.stringify({ email: 'alice@example.com' }), group_0: 'acme', elements_chain: chain('Buy') }),
    eventRow(own, 'alice', 'signup', day(2), { $browser: 'Chrome', amount: '7', $session_id: 'alice' }, { person_id: person.alice, group_0: 'acme' }),
    eventRow(own, 'bob', '$pageview', day(2), { $browser: 'Firefox', ...page('bob', '/') }, { person_id: person.bob, person_properties: JSON.stringify({ email: 'bob@example.com' }) }),
    eventRow(own, 'bob', '$pageview', day(3, 9), { $browser: 'Firefox' }, { person_id: person.bob }),
    ...otherUuids.map((uuid, i) =>
      eventRow(theirs, i === 2 ? MARKER : 'alice', i === 1 ? 'signup' : '$pageview', day(i + 1), { $browser: 'Chrome', plan: THEIRS, amount: 5, secret: MARKER, ...page('alice', `/${MARKER}`) }, {
        uuid,
        person_id: person.alice,
        person_properties: JSON.stringify({ email: `${MARKER}@example.com` }),
        group_0: 'acme',
        elements_chain: chain(MARKER),
      }),
    ),
  ]);
  const personRow = (team: number, id: string, properties: object, version: number) => ({ id, created_at: day(1), team_id: team, properties: JSON.stringify(properties), is_identified: 1, is_deleted: 0, version });
  await api.clickhouse.insert('person', PERSON_COLUMNS, [
    personRow(own, person.alice, { email: 'alice@example.com', plan: 'pro' }, 1),
    personRow(own, person.bob, { email: 'bob@example.com', plan: 'free' }, 1),
    personRow(theirs, person.alice, { email: `${MARKER}@example.com`, plan: THEIRS, secret: MARKER }, 99),
  ]);
  const pdi = (team: number, distinct_id: string, person_id: string, version: number) => ({ team_id: team, distinct_id, person_id, is_deleted: 0, version });
  await api.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, [pdi(own, 'alice', person.alice, 1), pdi(own, 'bob', person.bob, 1), pdi(theirs, 'alice', person.alice, 99), pdi(theirs, 'bob', person.alice, 99)]);
  const group = (team: number, key: string, properties: object, version: number) => ({ group_type_index: 0, group_key: key, created_at: day(1), team_id: team, group_properties: JSON.stringify(properties), version });
  const groups = [group(own, 'acme', { tier: 'gold' }, 1), group(theirs, 'acme', { tier: MARKER, secret: THEIRS }, 99)];
  await api.clickhouse.insert('groups', Object.keys(groups[0]!) as (keyof (typeof groups)[0])[], groups);
  await replicasHold(api.clickhouse, api.config, [own, theirs]);
  const cohort = async (who: TestTenant, filters: object) =>
    (await api.request('POST', `/api/projects/${who.project.id}/cohorts/`, who.personalApiKey, { name: `pro ${randomUUID()}`, filters })).body.id as number;
  const pro = { properties: { type: 'OR', values: [{ key: 'plan', value: 'pro', type: 'person' }] } };
  cohorts.own.push(await cohort(tenant, pro));
  cohorts.theirs.push(await cohort(other, pro));
});

/** What the project's answers may hold none of: the other project's marker and its rows' ids. */
const foreign = (text: string) => [MARKER, ...otherUuids].filter((value) => text.includes(value));

// ---- Generated filters: every type, keys and values of both projects, every operator a type takes.

const value = fc.constantFrom<unknown>('Chrome', 'pro', 'gold', 'Buy', '/pricing', 'button', THEIRS, 5, '7', 'alice@example.com', ['pro', THEIRS], '^/p', '-7d', '2024-01-02');
const valueOperator = fc.constantFrom('exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'lt', 'is_set', 'is_not_set', 'is_date_before', 'is_date_after');
const propertyKey = fc.constantFrom('$browser', 'plan', 'amount', 'secret', 'email', 'tier', "a'b");
const filter = fc.oneof(
  fc.record({ type: fc.constantFrom('event', 'person'), key: propertyKey, operator: valueOperator, value }),
  fc.record({ type: fc.constant('group'), group_type_index: fc.constantFrom(0, 1), key: propertyKey, operator: valueOperator, value }),
  fc.record({ type: fc.constant('element'), key: fc.constantFrom('tag_name', 'text', 'href'), operator: valueOperator, value }),
  fc.record({ type: fc.constant('cohort'), key: fc.constant('id'), operator: fc.constantFrom('in', 'not_in'), value: fc.constantFrom('own', 'theirs') }),
);
const filters = fc.array(filter, { minLength: 1, maxLength: 3 });
/** Cohort filters name the project's cohort or the other project's, by id (the other's must not exist here). */
const withCohortIds = (list: Record<string, unknown>[]) => list.map((f) => (f.type === 'cohort' ? { ...f, value: cohorts[f.value as 'own' | 'theirs'][0] } : f));

const path = (rest: string) => `/api/environments/${tenant.project.id}/${rest}`;
const query = (body: object) => api.request('POST', path('query/'), tenant.personalApiKey, { query: body, refresh: 'force_blocking' });
const newExperiment = () =>
  api.request('POST', path('experiments/'), tenant.personalApiKey, { name: `generated ${randomUUID()}`, feature_flag_key: `generated-${randomUUID()}`, start_date: '2023-12-01T00:00:00Z', end_date: '2024-02-01T00:00:00Z' });

/** Every reader, each given the filters where it takes them. */
const READERS: Record<string, (properties: object[]) => Promise<{ status: number; text: string }>> = {
  'the events list': (properties) => api.request('GET', path(`events/?properties=${encodeURIComponent(JSON.stringify(properties))}`), tenant.personalApiKey),
  EventsQuery: (properties) => query({ kind: 'EventsQuery', select: ['*', 'person', 'properties.secret'], properties, after: '2023-12-01', before: '2024-02-01' }),
  TrendsQuery: (properties) => query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', properties }], dateRange: range, breakdownFilter: { breakdown: 'secret' } }),
  FunnelsQuery: (properties) => query({ kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], properties, dateRange: range, breakdownFilter: { breakdown: 'email', breakdown_type: 'person' } }),
  RetentionQuery: (properties) => query({ kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 3, retentionType: 'retention_recurring' }, properties, dateRange: range }),
  LifecycleQuery: (properties) => query({ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', properties, dateRange: range }),
  StickinessQuery: (properties) => query({ kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', properties, dateRange: range }),
  // Steps named by the marker-holding property: a row of the other project would show as a step.
  PathsQuery: (properties) => query({ kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 'properties.secret', localPathCleaningFilters: [{ regex: '^$', alias: 'none' }] }, properties, dateRange: range }),
  // The persons behind a point of each insight kind, the person rows joined to them: alice's id is the other project's person too.
  'ActorsQuery of a trends point': (properties) =>
    query({ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau', properties }], dateRange: range }, day: '2024-01-01' }, select: ['actor', 'event_count', 'properties.secret', 'properties.email'] }),
  'ActorsQuery of a funnel step': (properties) =>
    query({ kind: 'ActorsQuery', source: { kind: 'FunnelsActorsQuery', source: { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], properties, dateRange: range, breakdownFilter: { breakdown: 'email', breakdown_type: 'person' } }, funnelStep: 1 } }),
  'ActorsQuery of a retention cohort': (properties) =>
    query({ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 3 }, properties, dateRange: range }, interval: 0 } }),
  'ActorsQuery of a lifecycle status': (properties) =>
    query({ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', properties, dateRange: range }, status: 'new', day: '2024-01-01' } }),
  'ActorsQuery of a stickiness bucket': (properties) =>
    query({ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', properties, dateRange: range }, day: 1 } }),
  // Every person, searched for the values the filters hold: the other project's among them.
  'ActorsQuery of every person': (properties) => query({ kind: 'ActorsQuery', search: String((properties[0] as { value?: unknown }).value ?? THEIRS), select: ['actor', 'properties.secret'] }),
  // Sessions the other project shares ids with: a page of theirs would show as a row.
  WebOverviewQuery: (properties) => query({ kind: 'WebOverviewQuery', properties, dateRange: range, compareFilter: { compare: true } }),
  WebStatsTableQuery: (properties) => query({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', properties, dateRange: range, compareFilter: { compare: true } }),
  'WebStatsTableQuery by entry page': (properties) => query({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialPage', properties, dateRange: range }),
  // An experiment's metrics take the same filters; its variants are read off the events, whose keys the other project shares.
  ExperimentTrendsQuery: async (properties) => {
    const experiment = await newExperiment();
    if (experiment.status !== 201) return experiment;
    return query({ kind: 'ExperimentTrendsQuery', experiment_id: experiment.body.id, count_query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', properties }], dateRange: range } });
  },
  ExperimentFunnelsQuery: async (properties) => {
    const experiment = await newExperiment();
    if (experiment.status !== 201) return experiment;
    return query({ kind: 'ExperimentFunnelsQuery', experiment_id: experiment.body.id, funnels_query: { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview', properties }, { kind: 'EventsNode', event: 'signup' }], dateRange: range } });
  },
  // An action's steps take the same filters: as an ActionsNode series and as HogQL's matchesAction.
  'an ActionsNode': async (properties) => {
    const action = await api.request('POST', path('actions/'), tenant.personalApiKey, { name: `generated ${randomUUID()}`, steps: [{ event: '$pageview', properties }, { event: '$autocapture', selector: 'div.main button', properties }] });
    if (action.status !== 201) return action;
    return query({ kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id: action.body.id }], dateRange: range, breakdownFilter: { breakdown: 'secret' } });
  },
  matchesAction: async (properties) => {
    const name = `generated ${randomUUID()}`;
    const action = await api.request('POST', path('actions/'), tenant.personalApiKey, { name, steps: [{ properties }, { url: 'secret', url_matching: 'contains' }] });
    if (action.status !== 201) return action;
    return query({ kind: 'HogQLQuery', query: `SELECT event, properties.secret, person.properties.email FROM events WHERE matchesAction('${name}')` });
  },
  'a saved insight': async (properties) => {
    const source = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null }], properties, dateRange: range, breakdownFilter: { breakdown: 'tier', breakdown_type: 'group', breakdown_group_type_index: 0 } };
    const created = await api.request('POST', path('insights/'), tenant.personalApiKey, { name: 'generated', query: { kind: 'InsightVizNode', source } });
    return api.request('GET', path(`insights/${created.body.id}/?refresh=force_blocking`), tenant.personalApiKey);
  },
  'a dashboard': async (properties) => {
    const dashboard = await api.request('POST', path('dashboards/'), tenant.personalApiKey, { name: 'generated' });
    const source = { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview', properties }, { kind: 'EventsNode', event: 'signup' }], dateRange: range };
    await api.request('POST', path('insights/'), tenant.personalApiKey, { name: 'tile', query: { kind: 'InsightVizNode', source }, dashboards: [dashboard.body.id] });
    return api.request('GET', path(`dashboards/${dashboard.body.id}/?refresh=force_blocking`), tenant.personalApiKey);
  },
};

describe('every reader answers a project from its own rows alone, whatever filters it is given', () => {
  it.each(Object.keys(READERS))('%s', async (reader) => {
    await fc.assert(
      fc.asyncProperty(filters, async (generated) => {
        const { status, text } = await READERS[reader]!(withCohortIds(generated));
        // A filter the readers cannot run (a bad pattern, a cohort of another project) is the client's 400, never a 500.
        expect([200, 400]).toContain(status);
        expect(foreign(text)).toEqual([]);
      }),
      { numRuns: 12 },
    );
  });

  it("refuses a filter naming another project's cohort, as one that does not exist", async () => {
    for (const reader of ['the events list', 'EventsQuery', 'TrendsQuery'] as const) {
      const { status, text } = await READERS[reader]!([{ type: 'cohort', key: 'id', value: cohorts.theirs[0] }]);
      expect(status).toBe(400);
      expect(text).toContain(`cohort ${cohorts.theirs[0]} does not exist`);
    }
  });
});

describe('filters of every type on every path, as HogQL that runs', () => {
  const every = () => [
    { key: '$browser', value: 'chrome' },
    { key: 'email', operator: 'icontains', value: 'alice', type: 'person' },
    { key: 'tier', value: 'gold', type: 'group', group_type_index: 0 },
    { key: 'id', value: cohorts.own[0], type: 'cohort' },
    { key: 'text', value: 'buy', type: 'element' },
  ];

  it('the events list, EventsQuery and every insight kind take them, and find alice\'s first pageview alone', async () => {
    const list = await READERS['the events list']!(every());
    expect(list.status).toBe(200);
    expect(JSON.parse(list.text).results.map((e: { distinct_id: string; event: string }) => [e.distinct_id, e.event])).toEqual([['alice', '$pageview']]);
    for (const reader of ['EventsQuery', 'TrendsQuery', 'FunnelsQuery', 'RetentionQuery', 'LifecycleQuery', 'StickinessQuery', 'PathsQuery', 'WebOverviewQuery', 'WebStatsTableQuery']) {
      const { status, text } = await READERS[reader]!(every());
      expect([reader, status, status === 200 ? '' : text]).toEqual([reader, 200, '']);
      expect(text).not.toContain('<filter>');
    }
  });

  it("the persons behind each kind's point are alice alone, with her own properties, not the other project's person of her id", async () => {
    for (const reader of Object.keys(READERS).filter((name) => name.startsWith('ActorsQuery of a'))) {
      const { status, body, text } = await (READERS[reader]! as (p: object[]) => Promise<{ status: number; body: any; text: string }>)(every());
      expect([reader, status]).toEqual([reader, 200]);
      expect([reader, body.results.map((row: any[]) => row[0].properties.email)]).toEqual([reader, ['alice@example.com']]);
      expect(foreign(text)).toEqual([]);
    }
  });

  it("the hogql an EventsQuery answers with runs as a HogQLQuery, with the same rows; each insight kind's runs too", async () => {
    const events = await query({ kind: 'EventsQuery', select: ['event', 'distinct_id', 'timestamp', 'person.properties.email'], properties: every(), after: '2023-12-01', before: '2024-02-01' });
    expect(events.status).toBe(200);
    expect(events.body.results).toEqual([['$pageview', 'alice', '2024-01-01T12:00:00Z', 'alice@example.com']]);
    const rerun = await query({ kind: 'HogQLQuery', query: events.body.hogql });
    expect(rerun.status).toBe(200);
    expect(rerun.body.results).toEqual(events.body.results);
    for (const reader of ['TrendsQuery', 'FunnelsQuery', 'RetentionQuery', 'LifecycleQuery', 'StickinessQuery']) {
      const { text } = await READERS[reader]!(every());
      const again = await query({ kind: 'HogQLQuery', query: JSON.parse(text).hogql });
      expect([reader, again.status, again.body.detail]).toEqual([reader, 200, undefined]);
    }
  });
});
