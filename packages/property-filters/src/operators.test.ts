import { matchProperty } from './match-property.js';
import { postgresPropertyCondition } from './postgres-property-condition.js';
import { propertyFilterProblem } from './property-filter-problem.js';
import { PROPERTY_OPERATORS, VALUE_SHAPES, type PropertyFilterType, type ValueShape } from './property-filter.js';

const now = new Date('2024-01-10T00:00:00Z');

/** A value of each shape the validator accepts. */
const SAMPLE: Record<ValueShape, unknown> = {
  scalar_or_list: ['a', 1],
  scalar: 'a',
  pattern: '^a',
  date: '-7d',
  none: undefined,
  cohort_id: 3,
};

const compiles = {
  matcher: (filter: object) => matchProperty(filter as never, { p: 'a' }, now),
  postgres: (filter: object) => postgresPropertyCondition('p.properties', filter as never, () => '$1', now),
};

const TYPES: PropertyFilterType[] = ['person', 'event', 'group', 'cohort'];

describe('every operator the APIs accept runs on every backend', () => {
  describe.each(TYPES)('on %s filters', (type) => {
    it.each([...PROPERTY_OPERATORS])('%s: the validator refuses it, or both backends take it', (operator) => {
      const filter = { key: 'p', type, operator, value: SAMPLE[VALUE_SHAPES[operator]] };
      const problem = propertyFilterProblem(filter, 'filter', { types: TYPES, now });
      if (problem) return;
      // Cohort filters are resolved by the reader (membership), not compiled as a property condition.
      if (type === 'cohort') return expect(VALUE_SHAPES[operator]).toBe('cohort_id');
      for (const backend of Object.values(compiles)) expect(() => backend(filter)).not.toThrow();
    });
  });

  it('refuses an operator outside the list, and cohort operators on properties, naming the field', () => {
    expect(propertyFilterProblem({ key: 'p', operator: 'between', value: 1 }, 'f', { types: ['person'], now })).toMatchObject({ attr: 'f.operator' });
    expect(propertyFilterProblem({ key: 'p', operator: 'in', value: 3 }, 'f', { types: ['person'], now })).toMatchObject({ attr: 'f.operator', detail: expect.stringMatching(/does not apply to person/) });
    expect(propertyFilterProblem({ key: 'id', type: 'cohort', operator: 'exact', value: 3 }, 'f', { types: ['cohort'], now })).toMatchObject({ attr: 'f.operator' });
  });

  it('refuses values a backend could not read: an unparseable date, a pattern ClickHouse cannot run, an object', () => {
    const problem = (operator: string, value: unknown) => propertyFilterProblem({ key: 'p', operator, value }, 'f', { types: ['person'], now })?.detail;
    expect(problem('is_date_exact', 'last tuesday')).toMatch(/ISO 8601/);
    expect(problem('regex', '(?=a)')).toMatch(/lookaround/);
    // What ClickHouse's RE2 refused from the hostile-input run, each a 500 before: JavaScript takes them all.
    for (const pattern of ['(?<name>a)', '[[:foo:]]', '[\\b]', '\\p{Foo}', '\\u0041', 'a{1001}', 'a{2,5000}', '\\Q.*\\E', '\\cA']) {
      expect([pattern, problem('regex', pattern)]).toEqual([pattern, expect.stringMatching(/ClickHouse \(RE2\) cannot run/)]);
    }
    expect(problem('regex', '^a{2,1000}[a-z:]\\d$')).toBeUndefined();
    expect(problem('regex', '(')).toMatch(/not a valid regular expression/);
    expect(problem('gt', { a: 1 })).toMatch(/string, number or boolean/);
    expect(problem('exact', [])).toMatch(/non-empty list/);
    // Relative dates past what a Date can hold were an invalid date rendered into SQL, a 500.
    expect(problem('is_date_before', '-99999999999y')).toMatch(/ISO 8601/);
    // A Date can hold year -271764, Postgres cannot: a 500 from the persons list under hostile input.
    expect(problem('is_date_exact', '-99999999d')).toMatch(/ISO 8601/);
    expect(problem('is_date_exact', '-2000y')).toBeUndefined();
    // Cohort ids are Postgres integers: a larger one was a database error.
    const cohort = (value: unknown) => propertyFilterProblem({ key: 'id', type: 'cohort', value }, 'f', { types: ['cohort'], now })?.detail;
    expect(cohort(2 ** 63)).toMatch(/cohort id/);
    expect(cohort(1.5)).toMatch(/cohort id/);
    expect(cohort(999_999_999)).toBeUndefined();
  });

  it('compares a number too large for a double as text, on every backend, instead of rendering Infinity into SQL', () => {
    const filter = { key: 'p', operator: 'gt', value: '1e999' };
    for (const backend of Object.values(compiles)) expect(() => backend(filter)).not.toThrow();
  });
});
