import { behaviouralFilterProblem, intervalBefore } from './index.js';

const now = new Date('2026-05-10T12:00:00Z');
const base = { type: 'behavioral', key: 'purchase', event_type: 'events', value: 'performed_event', time_value: 30, time_interval: 'day' };
const problem = (changes: Record<string, unknown>) => behaviouralFilterProblem({ ...base, ...changes }, 'filters.properties.values[0]', now);

describe("a behavioural condition is checked before it is stored or built, each problem naming its field", () => {
  it('takes every kind in its PostHog shape', () => {
    expect(problem({})).toBeNull();
    expect(problem({ time_value: '30' })).toBeNull();
    expect(problem({ value: 'performed_event_multiple', operator: 'gte', operator_value: 3 })).toBeNull();
    expect(problem({ value: 'performed_event', explicit_datetime: '2026-01-01', time_value: undefined })).toBeNull();
    expect(problem({ value: 'performed_event_first_time' })).toBeNull();
    expect(problem({ value: 'stopped_performing_event', seq_time_value: 7, seq_time_interval: 'day' })).toBeNull();
    expect(problem({ value: 'restarted_performing_event', seq_time_value: 1, seq_time_interval: 'week' })).toBeNull();
    expect(problem({ value: 'performed_event_regularly', time_interval: 'week', time_value: 1, total_periods: 4, min_periods: 3, operator: 'gte', operator_value: 1 })).toBeNull();
    expect(problem({ event_type: 'actions', key: 12, negation: true })).toBeNull();
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown kind', { value: 'performed_event_sequence' }, 'value'],
    ['an unknown event_type', { event_type: 'pageviews' }, 'event_type'],
    ['an action key that is not an id', { event_type: 'actions', key: 'Bought' }, 'key'],
    ['an empty event name', { key: '' }, 'key'],
    ['a missing window', { time_value: undefined }, 'time_value'],
    ['an unknown interval', { time_interval: 'fortnight' }, 'time_interval'],
    ['a window over ten years', { time_value: 11, time_interval: 'year' }, 'time_value'],
    ['a fractional window', { time_value: 1.5 }, 'time_value'],
    ['an absurd count', { value: 'performed_event_multiple', operator_value: 1e12 }, 'operator_value'],
    ['an unknown count operator', { value: 'performed_event_multiple', operator: 'gt', operator_value: 1 }, 'operator'],
    ['a recent window no shorter than the window', { value: 'stopped_performing_event', seq_time_value: 30, seq_time_interval: 'day' }, 'seq_time_value'],
    ['periods beyond the bound', { value: 'performed_event_regularly', total_periods: 1000, min_periods: 1, operator_value: 1 }, 'total_periods'],
    ['periods over ten years in all', { value: 'performed_event_regularly', time_value: 1, time_interval: 'year', total_periods: 20, min_periods: 1, operator_value: 1 }, 'time_value'],
    ['more periods required than there are', { value: 'performed_event_regularly', total_periods: 2, min_periods: 3, operator_value: 1 }, 'min_periods'],
    ['an explicit date in the future', { explicit_datetime: '2027-01-01' }, 'explicit_datetime'],
    ['an explicit date that is not one', { explicit_datetime: 'yesterday' }, 'explicit_datetime'],
    ['a negation that is not a boolean', { negation: 'yes' }, 'negation'],
  ])('refuses %s', (_case, changes, field) => {
    expect(problem(changes)?.attr).toBe(`filters.properties.values[0].${field}`);
  });

  it('moves back by calendar months, clamped to the month’s last day', () => {
    expect(intervalBefore(new Date('2026-03-31T05:00:00Z'), 1, 'month').toISOString()).toBe('2026-02-28T05:00:00.000Z');
    expect(intervalBefore(new Date('2024-02-29T00:00:00Z'), 1, 'year').toISOString()).toBe('2023-02-28T00:00:00.000Z');
    expect(intervalBefore(now, 2, 'week').toISOString()).toBe('2026-04-26T12:00:00.000Z');
  });
});
