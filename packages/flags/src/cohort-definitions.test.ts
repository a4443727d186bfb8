import { cohortDefinitions, precomputedCohortIds, type StoredCohort } from './cohort-definitions.js';

const behavioural = { key: 'purchase', type: 'behavioral', value: 'performed_event', event_type: 'events', time_value: 30, time_interval: 'day' };
const property = { key: 'plan', type: 'person', value: 'pro' };
const nests = (id: number) => ({ key: 'id', type: 'cohort', value: id });
const dynamic = (id: number, ...values: unknown[]): StoredCohort => ({ id, is_static: false, filters: { properties: { type: 'OR', values: [{ type: 'AND', values }] } as never } });

describe('which cohorts are precomputed', () => {
  it('is a dynamic cohort with a behavioural condition at any depth, not one of person properties only', () => {
    expect(precomputedCohortIds([dynamic(1, behavioural), dynamic(2, property)])).toEqual(new Set([1]));
  });

  it('is a cohort that nests a behavioural one, through any number of cohorts, and not one that nests a property-only one', () => {
    const cohorts = [dynamic(1, behavioural), dynamic(2, nests(1)), dynamic(3, property, nests(2)), dynamic(4, property), dynamic(5, nests(4))];
    expect(precomputedCohortIds(cohorts)).toEqual(new Set([1, 2, 3]));
  });

  it('ends on cohorts that nest each other, and on nested ids that name no cohort of the project', () => {
    expect(precomputedCohortIds([dynamic(1, nests(2)), dynamic(2, nests(1))])).toEqual(new Set());
    expect(precomputedCohortIds([dynamic(1, nests(2)), dynamic(2, nests(1), behavioural), dynamic(3, nests(999))])).toEqual(new Set([1, 2]));
  });

  it('never counts a static cohort, whose members are listed by hand', () => {
    expect(precomputedCohortIds([{ id: 1, is_static: true, filters: { properties: { type: 'AND', values: [behavioural as never] } } }, dynamic(2, nests(1))])).toEqual(new Set());
  });

  it('walks a long chain of nested cohorts without recursion', () => {
    const chain = Array.from({ length: 20_000 }, (_, i) => (i === 0 ? dynamic(0, behavioural) : dynamic(i, nests(i - 1))));
    expect(precomputedCohortIds(chain).size).toBe(20_000);
    const star = Array.from({ length: 20_000 }, (_, i) => (i === 0 ? dynamic(0, behavioural) : dynamic(i, nests(0))));
    expect(precomputedCohortIds(star).size).toBe(20_000);
  });
});

describe('cohorts as flags read them', () => {
  it('lists static and precomputed cohorts and keeps a dynamic one’s filters', () => {
    const definitions = cohortDefinitions([{ id: 1, is_static: true, filters: {} }, dynamic(2, behavioural), dynamic(3, property)]);
    expect([...definitions.values()]).toEqual([
      { id: 1, kind: 'static' },
      { id: 2, kind: 'precomputed' },
      { id: 3, kind: 'dynamic', filters: { type: 'OR', values: [{ type: 'AND', values: [property] }] } },
    ]);
  });
});
