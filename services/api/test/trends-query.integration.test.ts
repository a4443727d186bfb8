import { randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, createTestTenant, eventRow, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

/** The shared event row, with the time first, as this file's table of events reads best. */
const row = (teamId: number, timestamp: string, distinctId: string, event: string, properties: object) => eventRow(teamId, distinctId, event, timestamp, properties);

const trends = (query: Record<string, unknown>, project = tenant.project.id) =>
  api.request('POST', `/api/environments/${project}/query/`, tenant.personalApiKey, { query: { kind: 'TrendsQuery', ...query } });

const JAN = { date_from: '2024-01-01', date_to: '2024-01-03' };
const pageviews = { kind: 'EventsNode', event: '$pageview' };

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  const t = tenant.project.id;
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
    row(t, '2024-01-01 09:00:00', 'ann', '$pageview', { $browser: 'Chrome', amount: 10 }),
    row(t, '2024-01-01 10:00:00', 'ann', '$pageview', { $browser: 'Chrome', amount: 20 }),
    row(t, '2024-01-01 23:59:59', 'bob', '$pageview', { $browser: 'Firefox', amount: 5 }),
    row(t, '2024-01-02 00:00:00', 'bob', '$pageview', { $browser: 'Safari', amount: 3 }),
    row(t, '2024-01-01 12:00:00', 'ann', 'signed up', {}),
    row(t, '2024-01-02 12:00:00', 'carl', 'signed up', {}),
    // The period before, for compare; and a day after the range, never counted.
    row(t, '2023-12-30 08:00:00', 'ann', '$pageview', { $browser: 'Chrome' }),
    row(t, '2023-12-30 09:00:00', 'ann', '$pageview', { $browser: 'Chrome' }),
    row(t, '2024-01-04 00:00:00', 'ann', '$pageview', { $browser: 'Chrome' }),
    // Another project's events in the same days: never counted.
    ...Array.from({ length: 5 }, () => row(other.project.id, '2024-01-01 09:00:00', 'ann', '$pageview', { $browser: 'Chrome', amount: 1000 })),
  ]);
  const people = { ann: { plan: 'pro' }, bob: { plan: 'free' }, carl: {} } as Record<string, Record<string, unknown>>;
  const ids = Object.fromEntries(Object.keys(people).map((d) => [d, randomUUID()]));
  await api.clickhouse.insert('person', PERSON_COLUMNS,
    Object.entries(people).map(([d, properties]) => ({ id: ids[d], created_at: '2023-12-01 00:00:00', team_id: t, properties: JSON.stringify(properties), is_identified: 1, is_deleted: 0, version: 1 })));
  await api.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS,
    Object.keys(people).map((d) => ({ team_id: t, distinct_id: d, person_id: ids[d], is_deleted: 0, version: 1 })));
  await replicasHold(api.clickhouse, api.config, [t]);
});

describe('POST .../query/ with a TrendsQuery', () => {
  it("counts a series per day, zero-filled, in PostHog's result shape", async () => {
    const { status, body } = await trends({ series: [pageviews], dateRange: JAN });
    expect(status).toBe(200);
    expect(body.results).toHaveLength(1);
    const [result] = body.results;
    expect(result).toMatchObject({
      data: [3, 1, 0],
      count: 4,
      labels: ['1-Jan-2024', '2-Jan-2024', '3-Jan-2024'],
      days: ['2024-01-01', '2024-01-02', '2024-01-03'],
      label: '$pageview',
      action: { id: '$pageview', type: 'events', order: 0, name: '$pageview', math: null },
    });
    expect(body).toMatchObject({ is_cached: false, hasMore: false, hogql: expect.stringContaining("toDate(timestamp, 'UTC') AS bucket") });
    expect(typeof body.last_refresh).toBe('string');
  });

  it.each([
    ['dau', {}, [2, 1, 0]],
    ['sum', { math_property: 'amount' }, [35, 3, 0]],
    ['avg', { math_property: 'amount' }, [35 / 3, 3, 0]],
    ['max', { math_property: 'amount' }, [20, 3, 0]],
  ])('math %s', async (math, extra, data) => {
    const { status, body } = await trends({ series: [{ ...pageviews, math, ...extra }], dateRange: JAN });
    expect(status).toBe(200);
    body.results[0].data.forEach((value: number, i: number) => expect(value).toBeCloseTo(data[i]!, 6));
  });

  it('counts all events of the project, and never another project\'s', async () => {
    const { body } = await trends({ series: [{ kind: 'EventsNode', event: null }], dateRange: JAN });
    expect(body.results[0]).toMatchObject({ label: 'All events', data: [4, 2, 0] });
  });

  it('breaks down by an event property: the top values, then the rest as "other"', async () => {
    const { status, body } = await trends({ series: [pageviews], dateRange: JAN, breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } });
    expect(status).toBe(200);
    expect(body.results.map((r: { breakdown_value: string; data: number[] }) => [r.breakdown_value, r.data])).toEqual([
      ['Chrome', [2, 0, 0]],
      ['$$_posthog_breakdown_other_$$', [1, 1, 0]],
    ]);
    expect(body.hasMore).toBe(true);
    // A count needs one statement: "other" is what the top values leave of every value's count.
    expect(body.timings.filter((t: { k: string }) => t.k.startsWith('./clickhouse_execute/'))).toHaveLength(1);
  });

  it('breaks a total value down in one statement for a count, and in two for unique users', async () => {
    const breakdownFilter = { breakdown: '$browser', breakdown_limit: 1 };
    const counted = await trends({ series: [pageviews], dateRange: JAN, breakdownFilter, trendsFilter: { display: 'ActionsPie' } });
    expect(counted.body.results.map((r: { breakdown_value: string; aggregated_value: number }) => [r.breakdown_value, r.aggregated_value])).toEqual([
      ['Chrome', 2],
      ['$$_posthog_breakdown_other_$$', 2],
    ]);
    const users = await trends({ series: [{ ...pageviews, math: 'dau' }], dateRange: JAN, breakdownFilter });
    expect(users.status).toBe(200);
    expect(users.body.timings.filter((t: { k: string }) => t.k.startsWith('./clickhouse_execute/'))).toHaveLength(2);
  });

  it('breaks down by a person property through the distinct id', async () => {
    const { status, body } = await trends({ series: [pageviews], dateRange: JAN, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } });
    expect(status).toBe(200);
    expect(body.results.map((r: { breakdown_value: string; data: number[] }) => [r.breakdown_value, r.data])).toEqual([
      ['free', [1, 1, 0]],
      ['pro', [2, 0, 0]],
    ]);
  });

  it("breaks down by a property of the event's group, read from the project's groups", async () => {
    const t = tenant.project.id;
    const org = (key: string) => ({ group_0: key });
    await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
      eventRow(t, 'ann', 'paid', '2024-01-01 09:00:00', {}, org('acme')),
      eventRow(t, 'bob', 'paid', '2024-01-02 09:00:00', {}, org('acme')),
      eventRow(t, 'bob', 'paid', '2024-01-02 10:00:00', {}, org('globex')),
      eventRow(t, 'carl', 'paid', '2024-01-03 09:00:00', {}, org('initech')),
      eventRow(t, 'carl', 'paid', '2024-01-03 10:00:00'),
    ]);
    const group = (key: string, properties: object, version: number, team = t) => ({ group_type_index: 0, group_key: key, created_at: '2024-01-01 00:00:00', team_id: team, group_properties: JSON.stringify(properties), version });
    // globex's later version renamed its industry; initech has none; another project's acme says otherwise.
    await api.clickhouse.insert('groups', ['group_type_index', 'group_key', 'created_at', 'team_id', 'group_properties', 'version'], [
      group('acme', { industry: 'retail' }, 1),
      group('globex', { industry: 'energy' }, 1),
      group('globex', { industry: 'tech' }, 2),
      group('initech', {}, 1),
      group('acme', { industry: 'spying' }, 9, other.project.id),
    ]);
    await replicasHold(api.clickhouse, api.config, [t, other.project.id], ['groups']);
    const { status, body } = await trends({ series: [{ kind: 'EventsNode', event: 'paid' }], dateRange: JAN, breakdownFilter: { breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 } });
    expect(status).toBe(200);
    expect(body.results.map((r: { breakdown_value: string; data: number[] }) => [r.breakdown_value, r.data])).toEqual([
      ['retail', [1, 1, 0]],
      ['tech', [0, 1, 0]],
      ['$$_posthog_breakdown_null_$$', [0, 0, 2]],
    ]);
  });

  it('compares with the previous period, each with its own days', async () => {
    const { body } = await trends({ series: [pageviews], dateRange: JAN, compareFilter: { compare: true } });
    expect(body.results).toHaveLength(2);
    expect(body.results[0]).toMatchObject({ compare: true, compare_label: 'current', data: [3, 1, 0], days: ['2024-01-01', '2024-01-02', '2024-01-03'] });
    expect(body.results[1]).toMatchObject({ compare: true, compare_label: 'previous', data: [0, 2, 0], days: ['2023-12-29', '2023-12-30', '2023-12-31'], labels: ['29-Dec-2023', '30-Dec-2023', '31-Dec-2023'] });
  });

  it('applies a formula over the series letters, per day', async () => {
    const { status, body } = await trends({ series: [pageviews, { kind: 'EventsNode', event: 'signed up' }], dateRange: JAN, trendsFilter: { formula: 'A/B*100' } });
    expect(status).toBe(200);
    expect(body.results).toHaveLength(1);
    expect(body.results[0]).toMatchObject({ label: 'Formula (A/B*100)', data: [300, 100, 0], count: 400 });
  });

  it('answers one aggregated value per series for BoldNumber', async () => {
    const { body } = await trends({ series: [pageviews, { ...pageviews, math: 'dau' }], dateRange: JAN, trendsFilter: { display: 'BoldNumber' } });
    expect(body.results.map((r: { aggregated_value: number }) => r.aggregated_value)).toEqual([4, 2]);
    expect(body.results[0]).toMatchObject({ data: [], count: 0 });
  });

  it('filters by series and global properties', async () => {
    const { body } = await trends({
      series: [{ ...pageviews, properties: [{ key: '$browser', value: ['Chrome', 'Firefox'], operator: 'exact', type: 'event' }] }],
      properties: [{ key: 'amount', value: 6, operator: 'gt', type: 'event' }],
      dateRange: JAN,
    });
    expect(body.results[0].data).toEqual([2, 0, 0]);
  });

  it('counts weekly active users over the seven days ending each day, and each week', async () => {
    const daily = await trends({ series: [{ ...pageviews, math: 'weekly_active' }], dateRange: JAN });
    expect(daily.status).toBe(200);
    expect(daily.body.results[0].data).toEqual([2, 2, 2]);
    const weekly = await trends({ series: [{ ...pageviews, math: 'weekly_active' }], dateRange: JAN, interval: 'week' });
    expect(weekly.body.results[0]).toMatchObject({ data: [2], days: ['2024-01-01'] });
  });

  it('takes the median of a property, and names a missing breakdown value as PostHog does', async () => {
    expect((await trends({ series: [{ ...pageviews, math: 'median', math_property: 'amount' }], dateRange: JAN })).body.results[0].data).toEqual([10, 3, 0]);
    const { body } = await trends({ series: [{ kind: 'EventsNode', event: 'signed up' }], dateRange: JAN, breakdownFilter: { breakdown: '$browser' } });
    expect(body.results.map((r: { breakdown_value: string; data: number[] }) => [r.breakdown_value, r.data])).toEqual([['$$_posthog_breakdown_null_$$', [1, 1, 0]]]);
  });

  it('starts "all" at the first event of the series', async () => {
    const { body } = await trends({ series: [{ kind: 'EventsNode', event: 'signed up' }], dateRange: { date_from: 'all', date_to: '2024-01-03' } });
    expect(body.results[0]).toMatchObject({ days: ['2024-01-01', '2024-01-02', '2024-01-03'], data: [1, 1, 0] });
  });

  it('refuses a bad request with a 400 naming the field', async () => {
    const math = await trends({ series: [{ ...pageviews, math: 'hamburger' }] });
    expect(math.status).toBe(400);
    expect(math.body).toMatchObject({ attr: 'query.series[0].math', detail: expect.stringContaining('must be one of') });
    const missing = await trends({});
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ attr: 'query.series', detail: 'query.series is required.' });
    const property = await trends({ series: [{ ...pageviews, math: 'sum' }] });
    expect(property.status).toBe(400);
    expect(property.body.detail).toMatch(/math_property/);
    const date = await trends({ series: [pageviews], dateRange: { date_from: 'yesterday-ish' } });
    expect(date.status).toBe(400);
    expect(date.body.detail).toMatch(/dateRange.date_from/);
  });
});
