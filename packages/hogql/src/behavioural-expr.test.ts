import { PropertyFilterError, type BehaviouralFilter } from '@tributary/property-filters';
import { unguardedReads } from '../test/two-team-fixture.js';
import { cohortPersonIdsQuery, loadHogQLParser, parseSelect, printHogQL, printQuery, propertyFilterExprs, type CohortDefinition, type CohortGroup, type FilterContext } from './index.js';

const now = new Date('2026-05-10T12:00:00Z');
const behavioural = (value: BehaviouralFilter['value'], rest: Partial<BehaviouralFilter> = {}): BehaviouralFilter => ({ type: 'behavioral', key: 'purchase', event_type: 'events', value, time_value: 30, time_interval: 'day', ...rest });
const dynamic = (id: number, values: CohortGroup['values'], type: 'AND' | 'OR' = 'AND'): [number, CohortDefinition] => [id, { id, static: false, filters: { type, values } }];

function contextWith(...cohorts: ReturnType<typeof dynamic>[]): FilterContext {
  return {
    now,
    cohorts: new Map<number, CohortDefinition>([...cohorts, [9, { id: 9, static: true, distinctIds: ['d1'] }]]),
    actions: new Map([[12, { id: 12, name: 'bought', steps: [{ event: 'purchase' }, { event: 'checkout', url: '/done' }] }]]),
  };
}

/** The persons of cohort 1, defined by `values`, as HogQL and as SQL for project 7. */
function persons(values: CohortGroup['values'], type: 'AND' | 'OR' = 'AND', ...more: ReturnType<typeof dynamic>[]) {
  const ast = cohortPersonIdsQuery(1, contextWith(dynamic(1, values, type), ...more));
  return { hogql: printHogQL(ast), sql: printQuery(ast, { teamId: 7 }).clickhouse, ast };
}

beforeAll(() => loadHogQLParser());

describe('a behavioural condition is one pass over the events it names, grouped by person, within windows ending at now', () => {
  const where = (from: string | null) => `(event = 'purchase')${from ? ` AND (timestamp > toDateTime('${from}'))` : ''} AND (timestamp < toDateTime('2026-05-10T12:00:00.000Z')) GROUP BY person_id`;

  it.each<[string, BehaviouralFilter, string]>([
    ['performed_event: at least once in the window', behavioural('performed_event'), `${where('2026-04-10T12:00:00.000Z')} HAVING count() > 0`],
    ['performed_event since an explicit date', behavioural('performed_event', { explicit_datetime: '-7d' }), `${where('2026-05-03T12:00:00.000Z')} HAVING count() > 0`],
    ['performed_event_multiple: a count in the window', behavioural('performed_event_multiple', { operator: 'lte', operator_value: 3, time_value: 2, time_interval: 'week' }), `${where('2026-04-26T12:00:00.000Z')} HAVING count() <= 3`],
    ['performed_event_multiple: exactly', behavioural('performed_event_multiple', { operator: 'exact', operator_value: 2, time_value: 1, time_interval: 'month' }), `${where('2026-04-10T12:00:00.000Z')} HAVING count() = 2`],
    ['performed_event_first_time: the first ever is in the window', behavioural('performed_event_first_time', { time_value: 1, time_interval: 'year' }), `${where(null)} HAVING min(timestamp) >= toDateTime('2025-05-10T12:00:00.000Z')`],
    [
      'stopped_performing_event: in the window, not in its recent part',
      behavioural('stopped_performing_event', { seq_time_value: 7, seq_time_interval: 'day' }),
      `${where('2026-04-10T12:00:00.000Z')} HAVING (countIf(timestamp <= toDateTime('2026-05-03T12:00:00.000Z')) > 0) AND (countIf(timestamp > toDateTime('2026-05-03T12:00:00.000Z')) = 0)`,
    ],
    [
      'restarted_performing_event: before the window, not in its earlier part, again in its recent part',
      behavioural('restarted_performing_event', { seq_time_value: 7, seq_time_interval: 'day' }),
      `${where(null)} HAVING (countIf(timestamp <= toDateTime('2026-04-10T12:00:00.000Z')) > 0) AND (countIf((timestamp > toDateTime('2026-04-10T12:00:00.000Z')) AND (timestamp <= toDateTime('2026-05-03T12:00:00.000Z'))) = 0) AND (countIf(timestamp > toDateTime('2026-05-03T12:00:00.000Z')) > 0)`,
    ],
    [
      'performed_event_regularly: enough periods with enough events each',
      behavioural('performed_event_regularly', { time_value: 1, time_interval: 'week', total_periods: 2, min_periods: 2, operator: 'gte', operator_value: 1 }),
      `${where('2026-04-26T12:00:00.000Z')} HAVING arraySum([countIf((timestamp > toDateTime('2026-05-03T12:00:00.000Z')) AND (timestamp <= toDateTime('2026-05-10T12:00:00.000Z'))) >= 1, countIf((timestamp > toDateTime('2026-04-26T12:00:00.000Z')) AND (timestamp <= toDateTime('2026-05-03T12:00:00.000Z'))) >= 1]) >= 2`,
    ],
  ])('%s', (_rule, filter, expected) => {
    expect(persons([filter]).hogql).toBe(`SELECT id FROM persons WHERE id IN (SELECT person_id FROM events WHERE ${expected})`);
  });

  it('moves back by calendar months and years, as ClickHouse does: a month before March 31 is February 28', () => {
    const ast = cohortPersonIdsQuery(1, { ...contextWith(dynamic(1, [behavioural('performed_event', { time_value: 1, time_interval: 'month' })])), now: new Date('2026-03-31T00:00:00Z') });
    expect(printHogQL(ast)).toContain("timestamp > toDateTime('2026-02-28T00:00:00.000Z')");
  });

  it("reads an action's steps for event_type actions, and refuses an action the context does not hold", () => {
    expect(persons([behavioural('performed_event', { event_type: 'actions', key: 12 })]).hogql).toContain(
      "WHERE ((event = 'purchase') OR ((event = 'checkout') AND (properties.$current_url LIKE '%/done%'))) AND (timestamp >",
    );
    expect(() => persons([behavioural('performed_event', { event_type: 'actions', key: 13 })])).toThrow(/action 13 does not exist/);
  });

  it('negates a condition over all persons, mixes with person properties, and nests AND/OR groups', () => {
    const { hogql } = persons([
      { key: 'plan', value: 'pro', type: 'person' },
      { type: 'OR', values: [behavioural('performed_event', { negation: true }), behavioural('performed_event_first_time', { key: 'signup' })] },
    ]);
    expect(hogql).toMatch(/^SELECT id FROM persons WHERE \(\(visitParamHas\(properties, 'plan'\)\) AND .*\) AND \(\(not\(id IN \(SELECT person_id FROM events WHERE \(event = 'purchase'\).*\)\)\) OR \(id IN \(SELECT person_id FROM events WHERE \(event = 'signup'\)/);
  });

  it('reads a cohort within a cohort as its persons, a static one through its distinct ids; negation and not_in negate', () => {
    const nested = persons([{ key: 'id', type: 'cohort', value: 2 }, { key: 'id', type: 'cohort', value: 9, negation: true }], 'AND', dynamic(2, [behavioural('performed_event')]));
    expect(nested.hogql).toBe(
      "SELECT id FROM persons WHERE (id IN (SELECT id FROM persons WHERE id IN (SELECT person_id FROM events WHERE (event = 'purchase') AND (timestamp > toDateTime('2026-04-10T12:00:00.000Z')) AND (timestamp < toDateTime('2026-05-10T12:00:00.000Z')) GROUP BY person_id HAVING count() > 0))) AND (not(id IN (SELECT id FROM persons WHERE id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id IN ['d1']))))",
    );
    expect(persons([{ key: 'id', type: 'cohort', value: 9, operator: 'not_in' }]).hogql).toContain('not(id IN (SELECT id FROM persons');
  });

  it('refuses a cohort that contains itself, nesting past the bound, and a cohort the context does not hold', () => {
    expect(() => persons([{ key: 'id', type: 'cohort', value: 2 }], 'AND', dynamic(2, [{ key: 'id', type: 'cohort', value: 1 }]))).toThrow(/cohort 1 contains itself/);
    const chain = Array.from({ length: 6 }, (_, i) => dynamic(i + 2, [{ key: 'id', type: 'cohort', value: i + 3 }]));
    expect(() => persons([{ key: 'id', type: 'cohort', value: 2 }], 'AND', ...chain)).toThrow(/nest more than 5 deep/);
    expect(() => persons([{ key: 'id', type: 'cohort', value: 40 }])).toThrow(PropertyFilterError);
  });

  it("refuses a cycle through an action's step, and a cohort that multiplies past the bound by naming others many times", () => {
    const context = contextWith(dynamic(1, [behavioural('performed_event', { event_type: 'actions', key: 14 })]));
    const looping: FilterContext = { ...context, actions: new Map([[14, { id: 14, name: 'loop', steps: [{ event: 'purchase', properties: [{ key: 'id', type: 'cohort', value: 1 }] }] }]]) };
    expect(() => cohortPersonIdsQuery(1, looping)).toThrow(/cohort 1 contains itself/);
    const fanOut = (id: number, next: number) => dynamic(id, Array.from({ length: 10 }, () => ({ key: 'id', type: 'cohort', value: next })));
    expect(() => persons([{ key: 'id', type: 'cohort', value: 2 }], 'AND', fanOut(2, 3), fanOut(3, 4), fanOut(4, 5), dynamic(5, [behavioural('performed_event')]))).toThrow(/more than 200 conditions/);
  });

  it('refuses a malformed condition when built, naming the field', () => {
    expect(() => persons([behavioural('performed_event', { time_value: 100_000 })])).toThrow(/time_value/);
    expect(() => persons([behavioural('performed_event_multiple', { operator_value: -1 })])).toThrow(/operator_value/);
  });

  it('guards every table it reads, and its HogQL parses back to the same SQL', async () => {
    const { sql, hogql } = persons(
      [behavioural('performed_event_regularly', { time_value: 1, time_interval: 'week', total_periods: 3, min_periods: 2, operator_value: 1 }), { key: 'id', type: 'cohort', value: 9 }, { key: "it's", value: "x' OR 1", type: 'person' }],
      'OR',
    );
    expect(unguardedReads(sql, 7)).toEqual([]);
    expect(printQuery(await parseSelect(hogql), { teamId: 7 }).clickhouse).toBe(sql);
  });

  it('filters events by a behavioural cohort through their distinct ids', () => {
    const context = contextWith(dynamic(1, [behavioural('performed_event')]));
    const [expr] = propertyFilterExprs([{ key: 'id', type: 'cohort', value: 1 }], context);
    expect(printHogQL({ node: 'SelectQuery', select: [{ node: 'Call', name: 'count', args: [] }], select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } }, where: expr! })).toMatch(
      /^SELECT count\(\) FROM events WHERE distinct_id IN \(SELECT distinct_id FROM person_distinct_ids WHERE person_id IN \(SELECT id FROM persons WHERE id IN \(SELECT person_id FROM events WHERE \(event = 'purchase'\)/,
    );
  });
});
