import { sql } from '@tributary/clickhouse';
import { PropertyFilterError, parseDateInput } from '@tributary/property-filters';
import { cohortIds, compilePropertyFilters } from './index.js';

const now = new Date('2026-05-10T12:00:00Z');
const context = { teamId: 7, now, cohorts: new Map([[3, sql`person_id IN ['p1']`]]) };
const compile = (filters: Parameters<typeof compilePropertyFilters>[0]) => compilePropertyFilters(filters, context).text;

describe('property filters', () => {
  it('exact compares ignoring case, and an array value means any element', () => {
    expect(compile([{ key: 'plan', value: ['Pro', 'Team'], operator: 'exact' }])).toContain("IN ('pro', 'team')");
  });

  it('defaults to exact on event properties', () => {
    expect(compile([{ key: 'plan', value: 'pro' }])).toContain("visitParamExtractRaw(properties, 'plan')");
  });

  it('reads person properties for type person', () => {
    expect(compile([{ key: 'email', value: 'x', operator: 'icontains', type: 'person' }])).toContain("positionCaseInsensitive(if(substring(visitParamExtractRaw(person_properties, 'email')");
  });

  it('compares numerically when the value is a number', () => {
    expect(compile([{ key: 'n', value: 5, operator: 'gt' }])).toContain("toFloat64OrNull(visitParamExtractRaw(properties, 'n')) > 5");
    expect(compile([{ key: 'v', value: 'b', operator: 'lt' }])).toContain("< 'b'");
  });

  it('refuses an invalid regular expression, naming the property', () => {
    expect(() => compile([{ key: 'url', value: '(', operator: 'regex' }])).toThrow(/url.*not a valid regular expression/);
  });

  it('refuses an unknown operator, listing the known ones', () => {
    expect(() => compile([{ key: 'a', value: 1, operator: 'between' }])).toThrow(/unknown operator "between"/);
  });

  it('resolves relative dates for date operators', () => {
    expect(compile([{ key: 'signup', value: '-7d', operator: 'is_date_after' }])).toContain("toDateTime('2026-05-03 12:00:00', 'UTC')");
  });

  it('filters groups through the groups table by their index', () => {
    expect(compile([{ key: 'tier', value: 'gold', type: 'group', group_type_index: 1 }])).toMatch(/^\(group_1 IN \(SELECT group_key FROM groups FINAL WHERE team_id = 7 AND group_type_index = 1/);
    expect(() => compile([{ key: 'tier', value: 'gold', type: 'group' }])).toThrow(/group_type_index/);
  });

  it('uses the caller-resolved condition for cohorts, negated by not_in', () => {
    expect(compile([{ key: 'id', value: 3, type: 'cohort' }])).toBe("(person_id IN ['p1'])");
    expect(compile([{ key: 'id', value: 3, type: 'cohort', operator: 'not_in' }])).toBe("(NOT (person_id IN ['p1']))");
    expect(() => compile([{ key: 'id', value: 4, type: 'cohort' }])).toThrow(PropertyFilterError);
    expect(cohortIds([{ key: 'id', value: '3', type: 'cohort' }, { key: 'a' }])).toEqual([3]);
    // Only ids Postgres can look up: NaN, 1.5 or 2^63 went to the cohorts query and failed there, a 500.
    expect(cohortIds(['NaN', 1.5, 2 ** 63, -1, '1e308', { a: 1 }].map((value) => ({ key: 'id', value, type: 'cohort' })))).toEqual([]);
    expect(() => compilePropertyFilters([{ key: 'id', value: 1.5, type: 'cohort' }], { teamId: 1, now: new Date(), cohorts: new Map() })).toThrow(PropertyFilterError);
  });

  it('escapes keys and values', () => {
    expect(compile([{ key: "a'b", value: "x' OR '1'='1" }])).toContain("'a\\'b'");
    expect(compile([{ key: 'a', value: "x' OR '1'='1" }])).toContain("'x\\' or \\'1\\'=\\'1'");
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
