import { loadHogQLParser, printHogQL, printQuery } from '@tributary/hogql';
import { evaluateFormula, parseFormula } from './trends-formula.js';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER, topBreakdownValues } from '../toolkit/breakdown.js';
import { breakdownCountRows, buildBreakdownCountQuery, buildBreakdownValuesQuery, countsInOnePass, buildSeriesQuery, type TrendsQueryRequest } from './trends-query.js';
import { applyFormula, shapeSeries, sortBreakdownResults } from './trends-results.js';
import { InsightCalendar } from '../toolkit/insight-calendar.js';

beforeAll(() => loadHogQLParser());

const now = new Date('2024-03-15T10:30:00Z');
const cal = new InsightCalendar('UTC');
const request = (extra: Partial<TrendsQueryRequest> = {}): TrendsQueryRequest => ({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra });

describe('formulas', () => {
  it('evaluates numbers, series letters, + - * / and brackets', async () => {
    const values = { A: 10, B: 4, C: 2 };
    expect(evaluateFormula(await parseFormula('A/B*100', 3), values)).toBe(250);
    expect(evaluateFormula(await parseFormula('(A + B) * C - 1', 3), values)).toBe(27);
    expect(evaluateFormula(await parseFormula('a - -b', 3), values)).toBe(14);
  });

  it('answers 0 for a division by zero', async () => {
    expect(evaluateFormula(await parseFormula('A / B', 2), { A: 1, B: 0 })).toBe(0);
  });

  it('refuses anything else: functions, fields, letters without a series', async () => {
    await expect(parseFormula('sleep(1)', 1)).rejects.toThrow(/only numbers/);
    await expect(parseFormula('properties.x', 1)).rejects.toThrow(/not a series letter/);
    await expect(parseFormula('A + C', 2)).rejects.toThrow(/series C does not exist/);
    await expect(parseFormula("'a'", 1)).rejects.toThrow(/only numbers/);
  });

  it('replaces the series by one result per bucket, labelled as PostHog labels it', () => {
    const base = { days: ['2024-01-01', '2024-01-02'], filter: {}, label: 'x' };
    const action = (order: number) => ({ order }) as never;
    const results = applyFormula(
      [
        { ...base, action: action(0), data: [10, 0], count: 10 },
        { ...base, action: action(1), data: [5, 0], count: 5 },
      ],
      { node: 'ArithmeticOperation', op: '/', left: { node: 'Field', chain: ['A'] }, right: { node: 'Field', chain: ['B'] } },
      'A/B',
      2,
      false,
    );
    expect(results).toEqual([expect.objectContaining({ label: 'Formula (A/B)', action: null, data: [2, 0], count: 2 })]);
  });
});

describe('series queries', () => {
  const input = (extra: Partial<TrendsQueryRequest> = {}, series = request(extra).series[0]!) => ({ request: request(extra), series, period: cal.resolveDateRange({ date_from: '2024-01-01', date_to: '2024-01-07' }, 'day', now), interval: 'day' as const, filters: { now, cohorts: new Map() }, cal });

  it('counts per bucket in HogQL the printer guards to the project', () => {
    const ast = buildSeriesQuery(input());
    expect(printHogQL(ast)).toBe(
      "SELECT toDate(timestamp, 'UTC') AS bucket, count() AS total FROM events WHERE (event = '$pageview') AND (timestamp >= toDateTime('2024-01-01T00:00:00.000Z')) AND (timestamp < toDateTime('2024-01-08T00:00:00.000Z')) GROUP BY bucket ORDER BY bucket ASC LIMIT 7",
    );
    expect(printQuery(ast, { teamId: 42 }).clickhouse).toContain('`events`.team_id = 42');
  });

  it.each([
    ['dau', {}, 'uniqExact(person_id)'],
    ['sum', { math_property: 'amount' }, "sum(toFloat(properties.amount))"],
    ['p90', { math_property: 'amount' }, 'quantile(0.9)(toFloat(properties.amount))'],
    ['unique_group', { math_group_type_index: 1 }, 'uniqExact($group_1)'],
    ['weekly_active', {}, "arrayReduce('groupUniqArrayArray', arrayMap(day -> arrayMap(i -> addDays(day, i), range(7)), groupUniqArray(toDate(timestamp, 'UTC')))) AS buckets"],
  ] as const)('math %s', (math, extra, expected) => {
    const ast = buildSeriesQuery(input({}, { kind: 'EventsNode', event: 'e', math, ...extra }));
    expect(printHogQL(ast)).toContain(expected);
    printQuery(ast, { teamId: 1 });
  });

  it('counts active users once per person: their days gathered first, then each bucket those days keep them active in', () => {
    const weekly = { kind: 'EventsNode' as const, event: 'e', math: 'weekly_active' as const };
    expect(printHogQL(buildSeriesQuery(input({}, weekly)))).toBe(
      "SELECT arrayJoin(buckets) AS bucket, count() AS total FROM (SELECT person_id AS actor, arrayReduce('groupUniqArrayArray', arrayMap(day -> arrayMap(i -> addDays(day, i), range(7)), groupUniqArray(toDate(timestamp, 'UTC')))) AS buckets FROM events WHERE (event = 'e') AND (timestamp >= toDateTime('2023-12-26T00:00:00.000Z')) AND (timestamp < toDateTime('2024-01-08T00:00:00.000Z')) GROUP BY actor) GROUP BY bucket HAVING (bucket >= toDate('2024-01-01')) AND (bucket < toDate('2024-01-08')) ORDER BY bucket ASC LIMIT 7",
    );
    const byWeek = printHogQL(buildSeriesQuery({ ...input({}, weekly), interval: 'week' }));
    expect(byWeek).toContain('arrayMap(d -> toMonday(d), arrayFilter(d -> toDayOfWeek(d) = 7, arrayMap(i -> addDays(day, i), range(7))))');
    expect(() => buildSeriesQuery({ ...input({}, weekly), interval: 'hour' })).toThrow(/needs an interval of day, week or month/);
  });

  it('refuses a property math without a property', () => {
    expect(() => buildSeriesQuery(input({}, { kind: 'EventsNode', event: 'e', math: 'avg' }))).toThrow(/math_property/);
  });

  it('a total-value display has no buckets', () => {
    expect(printHogQL(buildSeriesQuery(input({ trendsFilter: { display: 'BoldNumber' } })))).toMatch(/^SELECT count\(\) AS total FROM events WHERE .* LIMIT 1$/);
  });
});

describe('breakdowns', () => {
  const breakdownFilter = { breakdown: '$browser', breakdown_limit: 1 };
  const period = cal.resolveDateRange({ date_from: '2024-01-01', date_to: '2024-01-02' }, 'day', now);
  const req = request({ breakdownFilter });
  const input = { request: req, series: req.series[0]!, period, interval: 'day' as const, filters: { now, cohorts: new Map() }, cal };

  it('asks for one more value than the limit, and groups the values past it as "other"', () => {
    expect(printHogQL(buildBreakdownValuesQuery(input))).toContain(`LIMIT 2`);
    const top = topBreakdownValues([['Chrome', 5], ['Firefox', 2]], 1);
    expect(top).toEqual({ values: ['Chrome'], other: true });
    const hogql = printHogQL(buildSeriesQuery(input, top));
    expect(hogql).toContain(`if(ifNull(properties.$browser, '${BREAKDOWN_NULL}') IN ('Chrome',), ifNull(properties.$browser, '${BREAKDOWN_NULL}'), '${BREAKDOWN_OTHER}') AS breakdown_value`);
    printQuery(buildSeriesQuery(input, top), { teamId: 1 });
  });

  it('counts in one statement: "other" is what the top values leave of every value\'s count, per bucket', () => {
    expect(countsInOnePass(req.series[0]!)).toBe(true);
    expect(countsInOnePass({ kind: 'EventsNode', event: 'e', math: 'dau' })).toBe(false);
    const hogql = printHogQL(buildBreakdownCountQuery(input));
    expect(hogql).toContain('arrayJoin([1, 0]) AS is_value');
    expect(hogql).toMatch(/ORDER BY is_value ASC, total DESC, value ASC LIMIT 3$/);
    printQuery(buildBreakdownCountQuery(input), { teamId: 1 });
    const rows = [
      [0, '', 9, ['2024-01-01', '2024-01-02'], [6, 3]],
      [1, 'Chrome', 5, ['2024-01-01', '2024-01-02'], [3, 2]],
      [1, 'Firefox', 4, ['2024-01-01', '2024-01-02'], [3, 1]],
    ];
    expect(breakdownCountRows(rows, 1, input)).toEqual({
      rows: [['2024-01-01', 'Chrome', 3], ['2024-01-02', 'Chrome', 2], ['2024-01-01', BREAKDOWN_OTHER, 3], ['2024-01-02', BREAKDOWN_OTHER, 1]],
      values: ['Chrome', BREAKDOWN_OTHER],
      other: true,
    });
    expect(breakdownCountRows(rows, 2, input)).toMatchObject({ values: ['Chrome', 'Firefox'], other: false });
    expect(breakdownCountRows([], 2, input)).toEqual({ rows: [], values: [], other: false });
  });

  it('shapes one result per value, zero-filled, "other" last', () => {
    const results = shapeSeries(
      {
        series: req.series[0]!,
        entity: { id: '$pageview', type: 'events', name: '$pageview' },
        order: 0,
        period,
        previous: false,
        rows: [['2024-01-01', BREAKDOWN_OTHER, 4], ['2024-01-02', 'Chrome', 1]],
        breakdownValues: ['Chrome', BREAKDOWN_OTHER],
      },
      req,
      'day',
      {},
      cal,
    );
    expect(sortBreakdownResults(results).map((r) => [r.breakdown_value, r.label, r.data])).toEqual([
      ['Chrome', 'Chrome', [0, 1]],
      [BREAKDOWN_OTHER, BREAKDOWN_OTHER, [4, 0]],
    ]);
  });

  it('breaks down by a person property through the person join, and by a group property through the project\'s groups', () => {
    const person = request({ breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } });
    const sql = printQuery(buildBreakdownValuesQuery({ ...input, request: person }), { teamId: 7 }).clickhouse;
    expect(sql).toContain("argMax(visitParamExtractRaw(p.properties, 'plan'), p.version) AS __person_property_0");
    expect(sql).toContain('`p`.team_id = 7');
    const group = request({ breakdownFilter: { breakdown: 'name', breakdown_type: 'group', breakdown_group_type_index: 0 } });
    const grouped = printQuery(buildBreakdownValuesQuery({ ...input, request: group }), { teamId: 7 }).clickhouse;
    expect(grouped).toContain('transform(`events`.`group_0`');
    expect(grouped).toContain('`g`.team_id = 7');
    const noIndex = request({ breakdownFilter: { breakdown: 'name', breakdown_type: 'group' } });
    expect(() => buildBreakdownValuesQuery({ ...input, request: noIndex })).toThrow(/breakdown_group_type_index/);
  });
});
