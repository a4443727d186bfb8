import { randomInt, randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, Sql, createClickHouse, type ClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser, printHogQL, printQuery } from '@tributary/hogql';
import { EVENT_ROW_COLUMNS, eventRow, replicasHold, testConfig } from '@tributary/test-support';
import { runFunnelsQuery, type FunnelsQueryRequest } from '../src/query/insights/funnels/funnels-query-runner.js';
import type { FunnelStepResult } from '../src/query/insights/funnels/funnels-query.js';
import { queryClickHouseSettings } from '../src/query/query-settings.js';
import { InsightCalendar } from '../src/query/insights/toolkit/insight-calendar.js';

/**
 * FunnelsQuery on fixture events written straight into ClickHouse for a fresh project, run the way
 * the query endpoint runs statements (its settings, readonly), not through HTTP.
 */
const TEAM = 800_000_000 + randomInt(90_000_000);
const OTHER_TEAM = TEAM + 1 + randomInt(1_000_000);
const config = testConfig();
let clickhouse: ClickHouse;

/**
 * The project's people (steps a -> b -> c; x is the exclusion, z any other event):
 * | person | distinct ids        | events                                                  | $browser on a |
 * | ann    | ann                 | a 01-01 10:00, b +10m, c +30m                           | Chrome        |
 * | bob    | bob                 | a 01-02 09:00, b +1h                                    | Firefox       |
 * | carl   | carl                | a 01-03 09:00, c 09:30, b 10:00                         | Chrome        |
 * | dan    | dan                 | a 01-01 00:00, b 01-20 00:00 (19 days: slow)            | Chrome        |
 * | eve    | eve                 | a 01-05 10:00, x 10:05, b 10:10, c 10:20                | Safari        |
 * | frank  | frank               | a 01-06 10:00, z 10:01, b 10:02                         | Firefox       |
 * | gil    | gil-web, gil-phone  | a 01-07 10:00 (web), b 10:05 (phone)                    | (none)        |
 */
const PROJECT_EVENTS = [
  eventRow(TEAM, 'ann', 'a', '2024-01-01 10:00:00', { $browser: 'Chrome' }),
  eventRow(TEAM, 'ann', 'b', '2024-01-01 10:10:00'),
  eventRow(TEAM, 'ann', 'c', '2024-01-01 10:40:00'),
  eventRow(TEAM, 'bob', 'a', '2024-01-02 09:00:00', { $browser: 'Firefox' }),
  eventRow(TEAM, 'bob', 'b', '2024-01-02 10:00:00'),
  eventRow(TEAM, 'carl', 'a', '2024-01-03 09:00:00', { $browser: 'Chrome' }),
  eventRow(TEAM, 'carl', 'c', '2024-01-03 09:30:00'),
  eventRow(TEAM, 'carl', 'b', '2024-01-03 10:00:00'),
  eventRow(TEAM, 'dan', 'a', '2024-01-01 00:00:00', { $browser: 'Chrome' }),
  eventRow(TEAM, 'dan', 'b', '2024-01-20 00:00:00'),
  eventRow(TEAM, 'eve', 'a', '2024-01-05 10:00:00', { $browser: 'Safari' }),
  eventRow(TEAM, 'eve', 'x', '2024-01-05 10:05:00'),
  eventRow(TEAM, 'eve', 'b', '2024-01-05 10:10:00'),
  eventRow(TEAM, 'eve', 'c', '2024-01-05 10:20:00'),
  eventRow(TEAM, 'frank', 'a', '2024-01-06 10:00:00', { $browser: 'Firefox' }),
  eventRow(TEAM, 'frank', 'z', '2024-01-06 10:01:00'),
  eventRow(TEAM, 'frank', 'b', '2024-01-06 10:02:00'),
  eventRow(TEAM, 'gil-web', 'a', '2024-01-07 10:00:00'),
  eventRow(TEAM, 'gil-phone', 'b', '2024-01-07 10:05:00'),
];

/** Another project with the same distinct ids, converting many times over: never counted. */
const OTHER_EVENTS = ['ann', 'bob', 'dan', 'zed'].flatMap((d) => [
  eventRow(OTHER_TEAM, d, 'a', '2024-01-10 10:00:00', { $browser: 'Chrome' }),
  eventRow(OTHER_TEAM, d, 'b', '2024-01-10 10:00:01'),
  eventRow(OTHER_TEAM, d, 'c', '2024-01-10 10:00:02'),
]);

async function insertPeople(teamId: number, people: Record<string, string[]>): Promise<void> {
  const ids = Object.fromEntries(Object.keys(people).map((p) => [p, randomUUID()]));
  await clickhouse.insert('person', PERSON_COLUMNS,
    Object.keys(people).map((p) => ({ id: ids[p], created_at: '2023-12-01 00:00:00', team_id: teamId, properties: '{}', is_identified: 1, is_deleted: 0, version: 1 })));
  await clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS,
    Object.entries(people).flatMap(([p, distinctIds]) => distinctIds.map((d) => ({ team_id: teamId, distinct_id: d, person_id: ids[p], is_deleted: 0, version: 1 }))));
  await replicasHold(clickhouse, config, [teamId]);
}

beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = createClickHouse(config);
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, [...PROJECT_EVENTS, ...OTHER_EVENTS]);
  await insertPeople(TEAM, { ann: ['ann'], bob: ['bob'], carl: ['carl'], dan: ['dan'], eve: ['eve'], frank: ['frank'], gil: ['gil-web', 'gil-phone'] });
  await insertPeople(OTHER_TEAM, { ann: ['ann'], bob: ['bob'], dan: ['dan'], zed: ['zed'] });
});

afterAll(async () => {
  await clickhouse.close();
});

const now = new Date('2024-02-01T12:00:00Z');
const JAN = { date_from: '2024-01-01', date_to: '2024-01-31' };
const step = (event: string) => ({ kind: 'EventsNode' as const, event });
const ABC = [step('a'), step('b'), step('c')];

const funnel = (extra: Partial<FunnelsQueryRequest> = {}, teamId = TEAM) =>
  runFunnelsQuery(
    { kind: 'FunnelsQuery', series: ABC, dateRange: JAN, ...extra },
    { now, filters: { now, cohorts: new Map() }, calendar: new InsightCalendar('UTC'), run: (ast) => clickhouse.queryCompact(Sql.trusted(printQuery(ast, { teamId }).clickhouse), { settings: queryClickHouseSettings(config) }), hogql: printHogQL },
  );

const counts = (steps: FunnelStepResult[]) => steps.map((s) => s.count);

describe('runFunnelsQuery (steps), counting persons', () => {
  it('an ordered three-step funnel counts each person once, at the furthest step reached in order within 14 days', async () => {
    const response = await funnel();
    const steps = response.results as FunnelStepResult[];
    // ann, eve: a b c; bob, carl (c before b), frank, gil (two distinct ids, one person): a b; dan: b 19 days later.
    expect(counts(steps)).toEqual([7, 6, 2]);
    expect(steps[0]).toMatchObject({ action_id: 'a', name: 'a', custom_name: null, order: 0, type: 'events', people: [], average_conversion_time: null, median_conversion_time: null });
    expect(response).toMatchObject({ is_cached: false, last_refresh: now.toISOString(), resolved_date_range: { date_from: '2024-01-01T00:00:00Z', date_to: '2024-01-31T23:59:59Z' } });
    expect(response.hogql).toContain('arrayCumSum');
    expect(response.timings.map((t) => t.k)).toEqual(['./clickhouse_execute/0', './query', '.']);
  });

  it('gives the average and median time between each step and the one before, in seconds', async () => {
    const steps = (await funnel()).results as FunnelStepResult[];
    // a -> b: 600 (ann), 3600 (bob), 3600 (carl), 600 (eve), 120 (frank), 300 (gil); b -> c: 1800 (ann), 600 (eve).
    expect(steps[1]!.average_conversion_time).toBeCloseTo(8820 / 6, 6);
    expect(steps[1]!.median_conversion_time).toBe(600);
    expect(steps[2]!.average_conversion_time).toBe(1200);
    expect(steps[2]!.median_conversion_time).toBe(1200);
  });

  it('the conversion window leaves out a slow converter, and a longer one takes them in', async () => {
    expect(counts((await funnel({ funnelsFilter: { funnelWindowInterval: 30, funnelWindowIntervalUnit: 'day' } })).results as FunnelStepResult[])).toEqual([7, 7, 2]);
    // Within one hour: bob and carl convert in exactly an hour (the window is inclusive), dan never.
    expect(counts((await funnel({ funnelsFilter: { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'hour' } })).results as FunnelStepResult[])).toEqual([7, 6, 2]);
    expect(counts((await funnel({ funnelsFilter: { funnelWindowInterval: 30, funnelWindowIntervalUnit: 'minute' } })).results as FunnelStepResult[])).toEqual([7, 4, 1]);
  });

  it('an unordered funnel counts the distinct steps done within the window from the first', async () => {
    const steps = (await funnel({ funnelsFilter: { funnelOrderType: 'unordered' } })).results as FunnelStepResult[];
    // carl's c before b now counts.
    expect(counts(steps)).toEqual([7, 6, 3]);
    // Third step times: ann 1800, carl 1800 (09:30 -> 10:00), eve 600.
    expect(steps[2]!.average_conversion_time).toBe(1400);
  });

  it('a strict funnel breaks at any other event between two steps', async () => {
    // frank (z between), carl (c between), eve (x between) stop at a; dan is too slow.
    expect(counts((await funnel({ funnelsFilter: { funnelOrderType: 'strict' } })).results as FunnelStepResult[])).toEqual([7, 3, 1]);
  });

  it('drops a person who did an excluded event between the exclusion\'s steps', async () => {
    const exclusions = [{ kind: 'EventsNode' as const, event: 'x', funnelFromStep: 0, funnelToStep: 1 }];
    const steps = (await funnel({ funnelsFilter: { exclusions } })).results as FunnelStepResult[];
    expect(counts(steps)).toEqual([6, 5, 1]);
    expect(steps[2]!.average_conversion_time).toBe(1800);
    // An exclusion between steps 1 and 2 does not drop eve: x came before b.
    expect(counts((await funnel({ funnelsFilter: { exclusions: [{ ...exclusions[0]!, funnelFromStep: 1, funnelToStep: 2 }] } })).results as FunnelStepResult[])).toEqual([7, 6, 2]);
  });

  it('breaks down by an event property of the first step, biggest first, the rest as "other"', async () => {
    const all = (await funnel({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })).results as FunnelStepResult[][];
    expect(all.map((f) => [f[0]!.breakdown_value, counts(f)])).toEqual([
      [['Chrome'], [3, 2, 1]],
      [['Firefox'], [2, 2, 0]],
      [['Safari'], [1, 1, 1]],
      [['$$_posthog_breakdown_null_$$'], [1, 1, 0]],
    ]);
    expect(all[0]![1]).toMatchObject({ breakdown: ['Chrome'], breakdown_value: ['Chrome'], order: 1 });
    const top = (await funnel({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 } })).results as FunnelStepResult[][];
    expect(top.map((f) => [f[0]!.breakdown_value![0], counts(f)])).toEqual([
      ['Chrome', [3, 2, 1]],
      ['Firefox', [2, 2, 0]],
      ['$$_posthog_breakdown_other_$$', [2, 2, 1]],
    ]);
  });

  it('filters steps by their own properties', async () => {
    const steps = (await funnel({ series: [{ ...step('a'), properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] }, step('b')] })).results as FunnelStepResult[];
    expect(counts(steps)).toEqual([3, 2]);
  });

  it("never counts another project's events, even for the same distinct ids", async () => {
    const steps = (await funnel({ dateRange: { date_from: '2024-01-10', date_to: '2024-01-10' } })).results as FunnelStepResult[];
    expect(counts(steps)).toEqual([0, 0, 0]);
    // And the other project sees only its own four people.
    expect(counts((await funnel({ dateRange: { date_from: '2024-01-10', date_to: '2024-01-10' } }, OTHER_TEAM)).results as FunnelStepResult[])).toEqual([4, 4, 4]);
  });
});

/**
 * A second project for the paths of PostHog's `aggregate_funnel` UDF (steps a -> b -> c, x excluded):
 * | person | events                                              |
 * | hal    | a 01-10 00:00, a 01-10 23:59:59, b 01-11 10:00      |
 * | ivy    | a 01-12 10:00, x 10:30 (never b)                    |
 * | jon    | a 01-13 10:00, b 10:05, b 10:10, c 10:20            |
 */
const PATHS_TEAM = OTHER_TEAM + 1 + randomInt(1_000_000);
const PATHS_EVENTS = [
  eventRow(PATHS_TEAM, 'hal', 'a', '2024-01-10 00:00:00'),
  eventRow(PATHS_TEAM, 'hal', 'a', '2024-01-10 23:59:59'),
  eventRow(PATHS_TEAM, 'hal', 'b', '2024-01-11 10:00:00'),
  eventRow(PATHS_TEAM, 'ivy', 'a', '2024-01-12 10:00:00'),
  eventRow(PATHS_TEAM, 'ivy', 'x', '2024-01-12 10:30:00'),
  eventRow(PATHS_TEAM, 'jon', 'a', '2024-01-13 10:00:00'),
  eventRow(PATHS_TEAM, 'jon', 'b', '2024-01-13 10:05:00'),
  eventRow(PATHS_TEAM, 'jon', 'b', '2024-01-13 10:10:00'),
  eventRow(PATHS_TEAM, 'jon', 'c', '2024-01-13 10:20:00'),
];

describe("runFunnelsQuery follows the paths of PostHog's funnel UDF", () => {
  beforeAll(async () => {
    await clickhouse.insert('events', EVENT_ROW_COLUMNS, PATHS_EVENTS);
    await insertPeople(PATHS_TEAM, { hal: ['hal'], ivy: ['ivy'], jon: ['jon'] });
  });

  const paths = (extra: Partial<FunnelsQueryRequest>) => funnel(extra, PATHS_TEAM).then((r) => r.results as FunnelStepResult[]);

  it('times a step from the latest first-step event before it: each one restarts the path', async () => {
    const steps = await paths({ series: [step('a'), step('b')] });
    expect(counts(steps)).toEqual([3, 2]);
    // hal from 23:59:59 (36001 s, not 122400 from midnight), jon 300.
    expect(steps[1]!.average_conversion_time).toBe((36_001 + 300) / 2);
  });

  it('drops a person whose path meets an excluded event, even when the next step never comes', async () => {
    const exclusions = [{ kind: 'EventsNode' as const, event: 'x', funnelFromStep: 0, funnelToStep: 1 }];
    expect(counts(await paths({ series: [step('a'), step('b')], funnelsFilter: { exclusions } }))).toEqual([2, 2]);
  });

  it('a strict funnel waits through repeats of the step reached, and breaks at any other event', async () => {
    const steps = await paths({ funnelsFilter: { funnelOrderType: 'strict' } });
    // jon's second b does not break a b c; ivy's x breaks her funnel at a.
    expect(counts(steps)).toEqual([3, 2, 1]);
    expect(steps[2]!.average_conversion_time).toBe(900);
  });
});
