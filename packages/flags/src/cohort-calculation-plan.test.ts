import { cohortsToCalculate, type CalculationState } from './cohort-calculation-plan.js';

const MINUTE = 60_000;
const now = new Date('2026-11-29T12:00:00Z');
const ago = (minutes: number) => new Date(now.getTime() - minutes * MINUTE);
const behavioural = { key: 'purchase', type: 'behavioral', value: 'performed_event', event_type: 'events', time_value: 30, time_interval: 'day' };
const property = { key: 'plan', type: 'person', value: 'pro' };
const nests = (id: number) => ({ key: 'id', type: 'cohort', value: id });

/** A cohort calculated 5 minutes ago, after its last edit an hour ago, unless `state` says otherwise. */
function cohort(id: number, values: unknown[], state: Partial<CalculationState> = {}): CalculationState {
  return { id, team_id: 1, is_static: false, filters: { properties: { type: 'AND', values: values as never } }, version: 3, last_calculation: ago(5), updated_at: ago(60), last_error_at: null, ...state };
}
const plan = (cohorts: CalculationState[], limit = 100) => cohortsToCalculate(cohorts, { now, intervalMs: 15 * MINUTE, limit }).map((c) => c.id);

describe('which cohorts the worker calculates now', () => {
  it('calculates a behavioural cohort never calculated, edited since, or older than the interval, and not one calculated within it', () => {
    expect(plan([cohort(1, [behavioural], { version: null, last_calculation: null })])).toEqual([1]);
    expect(plan([cohort(2, [behavioural], { updated_at: ago(1) })])).toEqual([2]);
    expect(plan([cohort(3, [behavioural], { last_calculation: ago(15) })])).toEqual([3]);
    expect(plan([cohort(4, [behavioural])])).toEqual([]);
  });

  it('never calculates a cohort of person properties only, which decide matches itself', () => {
    expect(plan([cohort(1, [property], { version: null, last_calculation: null })])).toEqual([]);
  });

  it('calculates a cohort that nests a behavioural one, and again when a cohort it nests is edited', () => {
    expect(plan([cohort(1, [behavioural]), cohort(2, [nests(1)], { version: null, last_calculation: null })])).toEqual([2]);
    expect(plan([cohort(1, [behavioural], { last_calculation: ago(1), updated_at: ago(2) }), cohort(2, [nests(1)])])).toEqual([2]);
  });

  it('waits an interval after a failed calculation before trying again', () => {
    expect(plan([cohort(1, [behavioural], { version: null, last_calculation: null, last_error_at: ago(1) })])).toEqual([]);
    expect(plan([cohort(1, [behavioural], { version: null, last_calculation: null, last_error_at: ago(16) })])).toEqual([1]);
  });

  it('takes the never calculated first, then the longest ago, up to the limit', () => {
    const cohorts = [cohort(1, [behavioural], { last_calculation: ago(20) }), cohort(2, [behavioural], { last_calculation: ago(40) }), cohort(3, [behavioural], { version: null, last_calculation: null })];
    expect(plan(cohorts)).toEqual([3, 2, 1]);
    expect(plan(cohorts, 2)).toEqual([3, 2]);
  });

  it('classifies each project’s cohorts on their own: an id another project uses names no cohort', () => {
    const other = cohort(1, [behavioural], { team_id: 2 });
    expect(plan([other, cohort(5, [nests(1)], { version: null, last_calculation: null })])).toEqual([]);
  });
});
