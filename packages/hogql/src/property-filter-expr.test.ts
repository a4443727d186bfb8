import { PropertyFilterError, VALUE_OPERATORS, parseDateInput, type StoredPropertyFilter } from '@tributary/property-filters';
import { cohortIds, loadHogQLParser, parseSelect, printHogQL, printQuery, propertyFilterExprs, type FilterContext, type SelectQuery } from './index.js';

const now = new Date('2026-05-10T12:00:00Z');
const context: FilterContext = {
  now,
  cohorts: new Map([
    [3, { id: 3, static: true, distinctIds: ['d1', 'd2'] }],
    [4, { id: 4, static: false, filters: { type: 'OR', values: [{ key: 'plan', value: 'pro', type: 'person' }, { key: 'email', operator: 'is_set', type: 'person', negation: true }] } }],
  ]),
};

/** The filters as the one condition of a query over events, as HogQL and as the printer's SQL for project 7. */
function query(filters: StoredPropertyFilter[]): { hogql: string; sql: string; ast: SelectQuery } {
  const exprs = propertyFilterExprs(filters, context);
  const ast: SelectQuery = { node: 'SelectQuery', select: [{ node: 'Call', name: 'count', args: [] }], select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } }, where: exprs.length === 1 ? exprs[0]! : { node: 'And', exprs } };
  return { hogql: printHogQL(ast), sql: printQuery(ast, { teamId: 7 }).clickhouse, ast };
}

beforeAll(() => loadHogQLParser());

describe('property filters as HogQL', () => {
  it('exact compares ignoring case, and an array value means any element', () => {
    expect(query([{ key: 'plan', value: ['Pro', 'Team'], operator: 'exact' }]).hogql).toContain("lowerUTF8(if(substring(visitParamExtractRaw(properties, 'plan'), 1, 1) = '\"'");
    expect(query([{ key: 'plan', value: ['Pro', 'Team'], operator: 'exact' }]).sql).toContain("IN ('pro', 'team')");
  });

  it('reads event properties by default, and person properties as at the event (poe)', () => {
    expect(query([{ key: 'plan', value: 'pro' }]).sql).toContain("visitParamHas(`events`.`properties`, 'plan')");
    const person = query([{ key: 'email', value: 'x', operator: 'icontains', type: 'person' }]);
    expect(person.hogql).toContain("positionCaseInsensitive(if(substring(visitParamExtractRaw(poe.properties, 'email')");
    expect(person.sql).toContain('`events`.`person_properties`');
  });

  it('compares numerically when the value is a number, as text otherwise', () => {
    expect(query([{ key: 'n', value: 5, operator: 'gt' }]).sql).toContain("(toFloat64OrNull(visitParamExtractRaw(`events`.`properties`, 'n')) > 5)");
    expect(query([{ key: 'v', value: 'b', operator: 'lt' }]).sql).toContain("< 'b')");
  });

  it('refuses an invalid regular expression or an unknown operator, naming the property', () => {
    expect(() => query([{ key: 'url', value: '(', operator: 'regex' }])).toThrow(/url.*not a valid regular expression/);
    expect(() => query([{ key: 'a', value: 1, operator: 'between' }])).toThrow(/unknown operator "between"/);
  });

  it('resolves relative dates for date operators', () => {
    expect(query([{ key: 'signup', value: '-7d', operator: 'is_date_after' }]).hogql).toContain("toDateTime('2026-05-03T12:00:00.000Z')");
  });

  it('filters groups through the guarded groups table by their index', () => {
    const { hogql, sql } = query([{ key: 'tier', value: 'gold', type: 'group', group_type_index: 1 }]);
    expect(hogql).toMatch(/^SELECT count\(\) FROM events WHERE \$group_1 IN \(SELECT key FROM groups WHERE \(index = 1\) AND /);
    expect(sql).toContain('`g`.team_id = 7');
    expect(() => query([{ key: 'tier', value: 'gold', type: 'group' }])).toThrow(/group_type_index/);
  });

  it("reads an event property filter on $group_N (a group's events, as PostHog's UI asks) from the event's group column", () => {
    const { hogql, sql } = query([{ key: '$group_2', value: 'Acme', operator: 'exact', type: 'event' }]);
    expect(hogql).toBe("SELECT count() FROM events WHERE ($group_2 != '') AND (lowerUTF8($group_2) IN ('acme',))");
    expect(sql).toContain('`events`.`group_2`');
    expect(query([{ key: '$group_2', operator: 'is_not_set' }]).hogql).toBe("SELECT count() FROM events WHERE not($group_2 != '')");
    // Only the five columns: any other `$group_…` key is an ordinary property.
    expect(query([{ key: '$group_5', value: 'x' }]).hogql).toContain("visitParamHas(properties, '$group_5')");
  });

  it("reads a static cohort's members by distinct id, a dynamic one's from the guarded, current persons; not_in negates", () => {
    expect(query([{ key: 'id', value: 3, type: 'cohort' }]).hogql).toBe("SELECT count() FROM events WHERE distinct_id IN ['d1', 'd2']");
    expect(query([{ key: 'id', value: 3, type: 'cohort', operator: 'not_in' }]).hogql).toBe("SELECT count() FROM events WHERE not(distinct_id IN ['d1', 'd2'])");
    const dynamic = query([{ key: 'id', value: '4', type: 'cohort' }]);
    expect(dynamic.hogql).toMatch(/^SELECT count\(\) FROM events WHERE distinct_id IN \(SELECT distinct_id FROM person_distinct_ids WHERE person_id IN \(SELECT id FROM persons WHERE .* OR \(not\(visitParamHas\(properties, 'email'\)\)\)\)\)$/);
    expect(dynamic.sql).toContain('argMax(p.properties, p.version)');
    expect(dynamic.sql).not.toContain('FINAL');
    for (const alias of ['p', 'd']) expect(dynamic.sql).toContain(`\`${alias}\`.team_id = 7`);
    expect(() => query([{ key: 'id', value: 5, type: 'cohort' }])).toThrow(PropertyFilterError);
    expect(cohortIds([{ key: 'id', value: '3', type: 'cohort' }, { key: 'a' }])).toEqual([3]);
    // Only ids Postgres can look up: NaN, 1.5 or 2^63 went to the cohorts query and failed there, a 500.
    expect(cohortIds(['NaN', 1.5, 2 ** 63, -1, '1e308', { a: 1 }].map((value) => ({ key: 'id', value, type: 'cohort' })))).toEqual([]);
    expect(() => query([{ key: 'id', value: 1.5, type: 'cohort' }])).toThrow(PropertyFilterError);
  });

  it('matches any element of the chain by tag, text or href; the negative operators none', () => {
    expect(query([{ key: 'tag_name', value: 'button', type: 'element' }]).hogql).toContain("arrayExists(element_value -> lowerUTF8(element_value) IN ('button',), extractAll(elements_chain, '(?:^|;)([A-Za-z0-9_-]+)'))");
    expect(query([{ key: 'text', value: 'Buy', operator: 'not_icontains', type: 'element' }]).hogql).toMatch(/^SELECT count\(\) FROM events WHERE not\(arrayExists\(element_value -> positionCaseInsensitive/);
    expect(query([{ key: 'href', operator: 'is_set', type: 'element' }]).hogql).toContain('notEmpty(extractAll(elements_chain,');
    expect(() => query([{ key: 'selector', value: 'a', type: 'element' }])).toThrow(/key must be one of tag_name, text, href/);
  });

  it('builds every value operator the validator accepts, on every type that takes one', () => {
    for (const type of ['event', 'person', 'group', 'element']) {
      for (const operator of VALUE_OPERATORS) {
        const filter = { key: type === 'element' ? 'text' : 'p', type, group_type_index: 0, operator, value: operator.startsWith('is_date') ? '-7d' : operator.includes('regex') ? '^a' : 'a' };
        expect(() => query([filter])).not.toThrow();
      }
    }
  });

  it('compares a number too large for a double as text, instead of rendering Infinity into SQL', () => {
    const { sql } = query([{ key: 'p', operator: 'gt', value: '1e999' }]);
    expect(sql).not.toContain('multiIf');
    expect(sql).not.toContain('Infinity');
  });

  it('escapes keys and values', () => {
    expect(query([{ key: "a'b", value: "x' OR '1'='1" }]).sql).toContain("'a\\'b'");
    expect(query([{ key: 'a', value: "x' OR '1'='1" }]).sql).toContain("'x\\' or \\'1\\'=\\'1'");
  });

  it('prints HogQL that parses back to a query the printer prints the same', async () => {
    const filters: StoredPropertyFilter[] = [
      { key: 'plan', value: ['Pro', 'x"y'], operator: 'exact' },
      { key: 'n', value: '5', operator: 'gte' },
      { key: 'email', value: '@example', operator: 'not_icontains', type: 'person' },
      { key: 'tier', value: 'gold', operator: 'is_not', type: 'group', group_type_index: 0 },
      { key: 'id', value: 4, type: 'cohort', operator: 'not_in' },
      { key: 'id', value: 3, type: 'cohort' },
      { key: 'href', value: '^/pricing', operator: 'regex', type: 'element' },
      { key: 'signup', value: '2026-01-01', operator: 'is_date_before' },
    ];
    const { hogql, sql } = query(filters);
    expect(printQuery(await parseSelect(hogql), { teamId: 7 }).clickhouse).toBe(sql);
  });
});

describe('date inputs', () => {
  it('reads relative forms in hours, days, weeks, months and years', () => {
    expect(parseDateInput('-24h', now)?.toISOString()).toBe('2026-05-09T12:00:00.000Z');
    expect(parseDateInput('-2w', now)?.toISOString()).toBe('2026-04-26T12:00:00.000Z');
    expect(parseDateInput('-1m', now)?.toISOString()).toBe('2026-04-10T12:00:00.000Z');
    expect(parseDateInput('1y', now)?.toISOString()).toBe('2025-05-10T12:00:00.000Z');
  });

  it('reads ISO 8601 and refuses anything else', () => {
    expect(parseDateInput('2026-01-02T03:04:05Z', now)?.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(parseDateInput('yesterday', now)).toBeNull();
  });
});
