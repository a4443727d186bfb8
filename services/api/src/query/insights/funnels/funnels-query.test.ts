import { HogQLError, loadHogQLParser, printHogQL, printQuery } from '@tributary/hogql';
import {
  buildFunnelBreakdownValuesQuery,
  buildFunnelQuery,
  funnelWindowSeconds,
  shapeFunnelResults,
  shapeFunnelRow,
  validateFunnelsQuery,
  type FunnelStepResult,
  type FunnelsQueryRequest,
} from './funnels-query.js';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER } from '../toolkit/breakdown.js';
import { InsightCalendar } from '../toolkit/insight-calendar.js';

const cal = new InsightCalendar('UTC');
beforeAll(() => loadHogQLParser());

const now = new Date('2024-02-01T12:00:00Z');
/** Steps here are events: no action is looked up. */
const NO_ACTIONS = { now, cohorts: new Map() };
const period = cal.resolveDateRange({ date_from: '2024-01-01', date_to: '2024-01-31' }, 'day', now);
const request = (extra: Partial<FunnelsQueryRequest> = {}): FunnelsQueryRequest => ({
  kind: 'FunnelsQuery',
  series: [{ kind: 'EventsNode', event: 'a' }, { kind: 'EventsNode', event: 'b', custom_name: 'Bought' }, { kind: 'EventsNode', event: null }],
  ...extra,
});

describe('building the funnel query', () => {
  it('is a HogQL tree the printer guards: every stored table read for the project alone', () => {
    const sql = printQuery(buildFunnelQuery({ request: request(), period, filters: { now, cohorts: new Map() }, cal }), { teamId: 42 }).clickhouse;
    expect(sql).toContain('`events`.team_id = 42');
    expect(sql).toContain('`d`.team_id = 42');
    expect(sql).not.toMatch(/team_id = (?!42)/);
  });

  it('reads events of the date range, one flag per step, and counts persons per step', () => {
    const hogql = printHogQL(buildFunnelQuery({ request: request(), period, filters: { now, cohorts: new Map() }, cal }));
    expect(hogql).toContain('person_id AS aggregation_target');
    expect(hogql).toContain("toDateTime('2024-01-01T00:00:00.000Z')");
    expect(hogql).toContain("toDateTime('2024-02-01T00:00:00.000Z')");
    expect(hogql).toMatch(/countIf\(person_steps >= 3\) AS count_2/);
    // Zero times are left out of the average and median, as PostHog leaves them.
    expect(hogql).toMatch(/medianIf\(person_conversion_time_2, \(person_steps >= 3\) AND \(person_conversion_time_2 > 0\)\) AS median_2/);
  });

  it('gives the window in seconds, 14 days by default', () => {
    expect(funnelWindowSeconds(undefined)).toBe(14 * 86_400);
    expect(funnelWindowSeconds({ funnelWindowInterval: 2, funnelWindowIntervalUnit: 'hour' })).toBe(7_200);
    expect(funnelWindowSeconds({ funnelWindowInterval: 1, funnelWindowIntervalUnit: 'week' })).toBe(604_800);
    expect(printHogQL(buildFunnelQuery({ request: request({ funnelsFilter: { funnelWindowInterval: 5, funnelWindowIntervalUnit: 'minute' } }), period, filters: { now, cohorts: new Map() }, cal }))).toContain('+ 300');
  });

  it('refuses a period and window too long together for its paths to be kept as numbers (the calendar allows 5000 days, far less)', () => {
    const build = (funnelWindowIntervalUnit: 'day' | 'month') => () =>
      buildFunnelQuery({ request: request({ funnelsFilter: { funnelWindowInterval: 1000, funnelWindowIntervalUnit } }), period: { ...period, from: new Date('1970-01-01T00:00:00Z') }, filters: NO_ACTIONS, cal });
    expect(build('month')).toThrow(/at most 68 years/);
    expect(build('day')).not.toThrow();
  });

  it('a strict funnel reads every event of the person; ordered and unordered only the steps\'', () => {
    const twoSteps = request({ series: [{ kind: 'EventsNode', event: 'a' }, { kind: 'EventsNode', event: 'b' }] });
    const where = (r: FunnelsQueryRequest) => printHogQL(buildFunnelQuery({ request: r, period, filters: { now, cohorts: new Map() }, cal }));
    expect(where(twoSteps)).toMatch(/\(\(event = 'a'\) OR \(event = 'b'\)\)/);
    expect(where({ ...twoSteps, funnelsFilter: { funnelOrderType: 'strict' } })).not.toMatch(/\(\(event = 'a'\) OR \(event = 'b'\)\)/);
  });

  it('a breakdown maps values past the top ones to "other", and ranks values by persons doing the first step', () => {
    const r = request({ breakdownFilter: { breakdown: '$browser' } });
    const hogql = printHogQL(buildFunnelQuery({ request: r, period, filters: { now, cohorts: new Map() }, cal }, { values: ['Chrome'], other: true }));
    expect(hogql).toContain(BREAKDOWN_OTHER);
    expect(hogql).toContain('GROUP BY breakdown_value');
    const values = printHogQL(buildFunnelBreakdownValuesQuery({ request: r, period, filters: { now, cohorts: new Map() }, cal }));
    expect(values).toContain('uniq(person_id) AS total');
    expect(values).toContain("event = 'a'");
  });

  it.each<[string, Partial<FunnelsQueryRequest>, RegExp]>([
    ['one step', { series: [{ kind: 'EventsNode', event: 'a' }] }, /at least two steps/],
    ['a data warehouse step', { series: [{ kind: 'EventsNode', event: 'a' }, { kind: 'DataWarehouseNode' } as never] }, /only EventsNode and ActionsNode/],
    ['time to convert', { funnelsFilter: { funnelVizType: 'time_to_convert' } }, /not supported yet/],
    ['trends', { funnelsFilter: { funnelVizType: 'trends' } }, /not supported yet/],
    ['an unknown order', { funnelsFilter: { funnelOrderType: 'random' as never } }, /funnelOrderType/],
    ['a window unit', { funnelsFilter: { funnelWindowIntervalUnit: 'fortnight' as never } }, /funnelWindowIntervalUnit/],
    ['a window of 0', { funnelsFilter: { funnelWindowInterval: 0 } }, /funnelWindowInterval/],
    ['an exclusion out of the funnel', { funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 1, funnelToStep: 3 }] } }, /exclusions\[0\]/],
    ['an exclusion backwards', { funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 1, funnelToStep: 1 }] } }, /exclusions\[0\]/],
    ['exclusions when unordered', { funnelsFilter: { funnelOrderType: 'unordered', exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 0, funnelToStep: 1 }] } }, /unordered/],
    ['more steps and exclusions than the sort key has flags for', { series: Array.from({ length: 20 }, (_, k) => ({ kind: 'EventsNode' as const, event: `s${k}` })), funnelsFilter: { exclusions: Array.from({ length: 8 }, () => ({ kind: 'EventsNode' as const, event: 'x', funnelFromStep: 0, funnelToStep: 1 })) } }, /at most 27/],
    ['groups', { aggregation_group_type_index: 0 }, /aggregation_group_type_index/],
  ])('refuses %s with a query error', (_, extra, message) => {
    const build = () => buildFunnelQuery({ request: request(extra), period, filters: { now, cohorts: new Map() }, cal });
    expect(build).toThrow(HogQLError);
    expect(build).toThrow(message);
  });

  it('takes filters of every type, as HogQL the printer resolves and guards', () => {
    const properties = [
      { key: 'id', value: 1, type: 'cohort' },
      { key: 'tier', value: 'gold', type: 'group', group_type_index: 0 },
      { key: 'tag_name', value: 'button', type: 'element' },
      { key: 'email', operator: 'is_set', type: 'person' },
    ];
    const cohorts = new Map([[1, { id: 1, static: false as const, filters: { values: [{ key: 'plan', value: 'pro' }] } }]]);
    const ast = buildFunnelQuery({ request: request({ properties }), period, filters: { now, cohorts }, cal });
    expect(printHogQL(ast)).toContain('distinct_id IN (SELECT distinct_id FROM person_distinct_ids WHERE person_id IN (SELECT id FROM persons WHERE');
    const sql = printQuery(ast, { teamId: 42 }).clickhouse;
    for (const alias of ['p', 'd', 'g']) expect(sql).toContain(`\`${alias}\`.team_id = 42`);
    expect(() => buildFunnelQuery({ request: request({ properties }), period, filters: { now, cohorts: new Map() }, cal })).toThrow('cohort 1 does not exist');
  });

  // Every kind, with and without exclusions (not taken unordered) and a breakdown: the statement for
  // twenty steps is within 1.5 times four of the one for five, where a shape walking a step per
  // step, or carrying every step's columns through every step's select, grows by a power.
  const KINDS = (['ordered', 'strict', 'unordered'] as const).flatMap((order) =>
    [false, true].flatMap((excluded) => (order === 'unordered' && excluded ? [] : [false, true].map((broken) => [order, excluded, broken] as const))),
  );
  it.each(KINDS)('a %s funnel (exclusions: %s, broken down: %s) prints a statement linear in its steps', (order, excluded, broken) => {
    const size = (n: number) => {
      const series = Array.from({ length: n }, (_, k) => ({ kind: 'EventsNode' as const, event: `e${k}` }));
      const exclusions = excluded ? [{ kind: 'EventsNode' as const, event: 'x', funnelFromStep: 0, funnelToStep: n - 1 }, { kind: 'EventsNode' as const, event: 'y', funnelFromStep: 1, funnelToStep: 3 }] : [];
      const r = request({ series, funnelsFilter: { funnelOrderType: order, exclusions }, ...(broken && { breakdownFilter: { breakdown: '$browser' } }) });
      const ast = buildFunnelQuery({ request: r, period, filters: NO_ACTIONS, cal }, broken ? { values: ['Chrome', 'Safari'], other: true } : undefined);
      return printQuery(ast, { teamId: 42 }).clickhouse.length;
    };
    expect(size(20)).toBeLessThan((20 / 5) * 1.5 * size(5));
  });

  it('walks every funnel in passes over the arrays, one row per person, exclusions too: no row per start', () => {
    const exclusions = [{ kind: 'EventsNode' as const, event: 'x', funnelFromStep: 0, funnelToStep: 2 }];
    for (const funnelsFilter of [{ funnelOrderType: 'ordered' as const }, { funnelOrderType: 'strict' as const }, { funnelOrderType: 'unordered' as const }, { exclusions }, { funnelOrderType: 'strict' as const, exclusions }]) {
      const hogql = printHogQL(buildFunnelQuery({ request: request({ funnelsFilter }), period, filters: NO_ACTIONS, cal }));
      expect(hogql).not.toContain('arrayJoin');
      expect(hogql).not.toContain('indexOf(');
    }
  });

  it('packs each event key in 32 bits where its time, rank and flags fit, in 64 where not', () => {
    const keyType = (r: FunnelsQueryRequest, at = period) => {
      const hogql = printHogQL(buildFunnelQuery({ request: r, period: at, filters: NO_ACTIONS, cal }));
      return hogql.match(/(toUInt32|toUInt64)\(\(+multiply\(toUInt64\(/)?.[1];
    };
    // A month of seconds (22 bits), ranks 0-3 (2 bits), 3 flags: 27 bits.
    expect(keyType(request())).toBe('toUInt32');
    // The same steps over five years of seconds: 28 bits of time.
    expect(keyType(request(), cal.resolveDateRange({ date_from: '2019-01-01', date_to: '2024-01-31' }, 'day', now))).toBe('toUInt64');
    // A month and nine steps: 4 bits of rank and 9 flags.
    const series = Array.from({ length: 9 }, (_, k) => ({ kind: 'EventsNode' as const, event: `e${k}` }));
    expect(keyType(request({ series }))).toBe('toUInt64');
  });

  it('reads exclusions for the project alone, like the steps', () => {
    const exclusions = [{ kind: 'EventsNode' as const, event: 'x', funnelFromStep: 0, funnelToStep: 2 }];
    const sql = printQuery(buildFunnelQuery({ request: request({ funnelsFilter: { exclusions } }), period, filters: NO_ACTIONS, cal }), { teamId: 42 }).clickhouse;
    expect(sql).toContain("`events`.`event` = 'x'");
    expect(sql).toContain('`events`.team_id = 42');
    expect(sql).not.toMatch(/team_id = (?!42)/);
  });

  it('accepts a valid request', () => {
    expect(() => validateFunnelsQuery(request({ funnelsFilter: { funnelOrderType: 'strict', exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 0, funnelToStep: 2 }] } }))).not.toThrow();
  });
});

describe("shaping results as PostHog's steps", () => {
  it('one step per series, with counts, names and conversion times (null at the first step and where nobody converted)', () => {
    const steps = shapeFunnelRow(request(), NO_ACTIONS, [10, 4, 0, 120.5, 60, Number.NaN, null]);
    expect(steps).toEqual([
      { action_id: 'a', name: 'a', custom_name: null, order: 0, people: [], count: 10, type: 'events', average_conversion_time: null, median_conversion_time: null },
      { action_id: 'b', name: 'b', custom_name: 'Bought', order: 1, people: [], count: 4, type: 'events', average_conversion_time: 120.5, median_conversion_time: 60 },
      { action_id: null, name: 'All events', custom_name: null, order: 2, people: [], count: 0, type: 'events', average_conversion_time: null, median_conversion_time: null },
    ]);
  });

  it('no row (nobody in the funnel) is zeros', () => {
    expect((shapeFunnelResults(request(), [], false, NO_ACTIONS) as FunnelStepResult[]).map((s) => s.count)).toEqual([0, 0, 0]);
  });

  it('a breakdown is a list of funnels, biggest first, the null value then "other" last, each step naming its value', () => {
    const row = (value: string, first: number) => [value, first, 1, 0, 5, 5, null, null];
    const funnels = shapeFunnelResults(request(), [row(BREAKDOWN_OTHER, 9), row('Chrome', 2), row(BREAKDOWN_NULL, 8), row('Safari', 3)], true, NO_ACTIONS) as FunnelStepResult[][];
    expect(funnels.map((f) => f[0]!.breakdown_value)).toEqual([['Safari'], ['Chrome'], [BREAKDOWN_NULL], [BREAKDOWN_OTHER]]);
    expect(funnels[0]![1]).toMatchObject({ breakdown: ['Safari'], breakdown_value: ['Safari'], count: 1, average_conversion_time: 5 });
  });
});
