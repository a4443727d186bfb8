import { randomInt, randomUUID } from 'node:crypto';
import { Sql, createClickHouse, type ClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser, printHogQL, printQuery, type SelectLike } from '@tributary/hogql';
import { EVENT_ROW_COLUMNS, eventRow, replicasHold, testConfig } from '@tributary/test-support';
import { runLifecycleQuery } from '../src/query/insights/lifecycle/lifecycle-query.js';
import { queryClickHouseSettings } from '../src/query/query-settings.js';
import { runRetentionQuery } from '../src/query/insights/retention/retention-query.js';
import { runStickinessQuery } from '../src/query/insights/stickiness/stickiness-query.js';
import { InsightCalendar } from '../src/query/insights/toolkit/insight-calendar.js';

/**
 * The stickiness, lifecycle and retention queries on a few persons over a few days, written
 * straight into ClickHouse for a new project per run, and run as the query endpoint runs them.
 *
 * | person | distinct ids     | created    | $pageview days (Jan 2024)     |
 * |--------|------------------|------------|-------------------------------|
 * | ann    | ann              | 2023-12-01 | 1, 2, 3 (twice), 5            |
 * | bob    | bob              | 2024-01-02 | 2, 3                          |
 * | carl   | carl             | 2024-01-01 | 1, 4                          |
 * | dan    | dan, dan-phone   | 2023-12-01 | 1 (dan), 2 (dan-phone)        |
 * | eve    | eve              | 2023-12-01 | Dec 31, 1                     |
 *
 * Another project has ann and bob too, active every day: none of it may count.
 */
const TEAM = 800_000_000 + randomInt(90_000_000);
const OTHER = TEAM + 1 + randomInt(1_000_000);
const now = new Date('2024-01-10T12:00:00Z');

const config = testConfig();
let clickhouse: ClickHouse;
const deps = (teamId = TEAM) => ({ now, filters: { now, cohorts: new Map() }, calendar: new InsightCalendar('UTC'), run: (ast: SelectLike) => clickhouse.queryCompact(Sql.trusted(printQuery(ast, { teamId }).clickhouse), { settings: queryClickHouseSettings(config) }), hogql: printHogQL });

const event = (team: number, distinctId: string, timestamp: string, name = '$pageview') => eventRow(team, distinctId, name, timestamp);

const PEOPLE: Record<string, { created: string; ids: string[]; days: string[] }> = {
  ann: { created: '2023-12-01', ids: ['ann'], days: ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-03', '2024-01-05'] },
  bob: { created: '2024-01-02', ids: ['bob'], days: ['2024-01-02', '2024-01-03'] },
  carl: { created: '2024-01-01', ids: ['carl'], days: ['2024-01-01', '2024-01-04'] },
  dan: { created: '2023-12-01', ids: ['dan', 'dan-phone'], days: ['2024-01-01', '2024-01-02'] },
  eve: { created: '2023-12-01', ids: ['eve'], days: ['2023-12-31', '2024-01-01'] },
};

beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = createClickHouse(config);
  const events = Object.values(PEOPLE).flatMap(({ ids, days }) => days.map((day, i) => event(TEAM, ids[Math.min(i, ids.length - 1)]!, `${day} 10:00:00`)));
  events.push(event(TEAM, 'ann', '2024-01-02 11:00:00', 'signed up'));
  for (const day of ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05']) for (const d of ['ann', 'bob', 'zed']) events.push(event(OTHER, d, `${day} 09:00:00`));
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, events);
  const ids = Object.fromEntries(Object.keys(PEOPLE).map((p) => [p, randomUUID()]));
  const persons = Object.entries(PEOPLE).map(([p, { created }]) => ({ id: ids[p]!, created_at: `${created} 00:00:00`, team_id: TEAM, properties: '{}', is_identified: 1, is_deleted: 0, version: 1 }));
  await clickhouse.insert('person', Object.keys(persons[0]!) as (keyof (typeof persons)[0])[], persons);
  const pdis = Object.entries(PEOPLE).flatMap(([p, { ids: distinctIds }]) => distinctIds.map((d) => ({ team_id: TEAM, distinct_id: d, person_id: ids[p]!, is_deleted: 0, version: 1 })));
  // The other project maps ann to a person of its own, at a higher version.
  pdis.push({ team_id: OTHER, distinct_id: 'ann', person_id: randomUUID(), is_deleted: 0, version: 9 });
  await clickhouse.insert('person_distinct_id', Object.keys(pdis[0]!) as (keyof (typeof pdis)[0])[], pdis);
  await replicasHold(clickhouse, config, [TEAM, OTHER]);
});

afterAll(() => clickhouse.close());

const JAN = { date_from: '2024-01-01', date_to: '2024-01-05' };
const pageviews = { kind: 'EventsNode' as const, event: '$pageview' };

describe('StickinessQuery', () => {
  it('counts persons by how many days of the range they were active, one person across distinct ids', async () => {
    const response = await runStickinessQuery({ kind: 'StickinessQuery', series: [pageviews, { kind: 'EventsNode', event: 'signed up' }], dateRange: JAN }, deps());
    expect(response).toMatchObject({ is_cached: false, last_refresh: now.toISOString(), hogql: expect.stringContaining('uniqExact') });
    expect(response.results[0]).toEqual({
      action: { order: 0, type: 'events', name: '$pageview', id: '$pageview' },
      label: '$pageview',
      // eve: 1 day (Dec 31 is outside); bob, carl, dan: 2 days; ann: 4 days.
      data: [1, 3, 0, 1, 0],
      count: 5,
      labels: ['1 day', '2 days', '3 days', '4 days', '5 days'],
      days: [1, 2, 3, 4, 5],
    });
    expect(response.results[1]).toMatchObject({ label: 'signed up', data: [1, 0, 0, 0, 0], action: { order: 1 } });
  });

  it('by week: the range spans two Monday weeks', async () => {
    const { results } = await runStickinessQuery({ kind: 'StickinessQuery', series: [pageviews], interval: 'week', dateRange: { date_from: '2023-12-31', date_to: '2024-01-05' } }, deps());
    // eve was active in the week of Dec 25 and of Jan 1; everyone else in the week of Jan 1 only.
    expect(results[0]).toMatchObject({ data: [4, 1], labels: ['1 week', '2 weeks'], days: [1, 2] });
  });

  it("never counts another project's events, nor the project's in another's answer", async () => {
    // The other project's persons were active all five days, the project's never were.
    const { results } = await runStickinessQuery({ kind: 'StickinessQuery', series: [pageviews], dateRange: JAN }, deps(OTHER));
    expect(results[0]!.data.slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(results[0]!.data[4]).toBeGreaterThan(0);
  });
});

describe('LifecycleQuery', () => {
  it('splits each day into new, returning, resurrecting and dormant persons, new by person.created_at', async () => {
    const response = await runLifecycleQuery({ kind: 'LifecycleQuery', series: [pageviews], dateRange: JAN }, deps());
    expect(response.results.map((r) => [r.status, r.data])).toEqual([
      // carl was created Jan 1 and bob Jan 2, each first active that day.
      ['new', [1, 1, 0, 0, 0]],
      // eve (active Dec 31); ann, dan (dan-phone); ann, bob.
      ['returning', [1, 2, 2, 0, 0]],
      // ann and dan, created before and not active Dec 31; carl back on the 4th; ann on the 5th.
      ['resurrecting', [2, 0, 0, 1, 1]],
      // carl, eve gone on the 2nd; dan on the 3rd; ann and bob on the 4th; carl on the 5th.
      ['dormant', [0, -2, -1, -2, -1]],
    ]);
    expect(response.results[3]).toMatchObject({
      label: '$pageview - dormant',
      count: -6,
      days: ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05'],
      labels: ['1-Jan-2024', '2-Jan-2024', '3-Jan-2024', '4-Jan-2024', '5-Jan-2024'],
      action: { id: '$pageview', name: '$pageview', type: 'events', order: 0, math: 'total' },
    });
    expect(response).toMatchObject({ is_cached: false, hogql: expect.stringContaining('arrayJoin') });
  });

  it("never counts another project's events, nor the project's in another's answer", async () => {
    // The other project's persons (no person rows: never new) were active every day of the range.
    const { results } = await runLifecycleQuery({ kind: 'LifecycleQuery', series: [pageviews], dateRange: JAN }, deps(OTHER));
    expect(results.map((r) => [r.status, r.data.slice(1)])).toEqual([
      ['new', [0, 0, 0, 0]],
      ['returning', [results[1]!.data[1], results[1]!.data[1], results[1]!.data[1], results[1]!.data[1]]],
      ['resurrecting', [0, 0, 0, 0]],
      ['dormant', [0, 0, 0, 0]],
    ]);
  });
});

describe('RetentionQuery', () => {
  const retention = (filter: Record<string, unknown>, teamId = TEAM) =>
    runRetentionQuery({ kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 5, ...filter }, dateRange: { date_to: '2024-01-05' } }, deps(teamId));
  const counts = (results: { values: { count: number }[] }[]) => results.map((r) => r.values.map((v) => v.count));

  it('recurring: each day\'s active persons, and how many of them came back each later day', async () => {
    const response = await retention({ retentionType: 'retention_recurring', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } });
    expect(counts(response.results)).toEqual([
      [4, 2, 1, 1, 1],
      [3, 2, 0, 1],
      [2, 0, 1],
      [1, 0],
      [1],
    ]);
    expect(response.results[0]).toMatchObject({ date: '2024-01-01T00:00:00Z', label: 'Day 0', values: [{ label: 'Day 0' }, { label: 'Day 1' }, { label: 'Day 2' }, { label: 'Day 3' }, { label: 'Day 4' }] });
    expect(response.results[4]).toMatchObject({ date: '2024-01-05T00:00:00Z', label: 'Day 4' });
    expect(response).toMatchObject({ is_cached: false, hogql: expect.stringContaining('arrayJoin') });
  });

  it('first time: persons whose first event ever was that day (eve started Dec 31, before the range)', async () => {
    const { results } = await retention({ retentionType: 'retention_first_time', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } });
    expect(counts(results)).toEqual([[3, 2, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0], [0, 0], [0]]);
  });

  it('returning by another event than the target', async () => {
    const { results } = await retention({ targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: 'signed up', type: 'events' } });
    expect(counts(results)[0]).toEqual([4, 1, 0, 0, 0]);
  });

  it("never counts another project's events", async () => {
    const { results } = await retention({ retentionType: 'retention_recurring' }, OTHER);
    // The other project's persons were active every day: each cohort comes back every day.
    expect(counts(results).every((row) => row.every((c) => c === row[0]))).toBe(true);
    expect(counts(results)[0]![0]).toBeLessThanOrEqual(3);
  });
});
