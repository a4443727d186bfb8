import { rowId } from '@tributary/postgres/row-id';
import { parseDateInput } from './relative-date.js';
import type { FilterProblem } from './property-filter-problem.js';

/**
 * PostHog's behavioural cohort condition (`type: "behavioral"` in a cohort's `filters.properties`):
 * what a person did with an event or an action (`event_type`, `key`) over time windows that end now.
 */
export const BEHAVIOURAL_VALUES = [
  'performed_event',
  'performed_event_multiple',
  'performed_event_first_time',
  'stopped_performing_event',
  'restarted_performing_event',
  'performed_event_regularly',
] as const;
export type BehaviouralValue = (typeof BEHAVIOURAL_VALUES)[number];

export const TIME_INTERVALS = ['hour', 'day', 'week', 'month', 'year'] as const;
export type TimeInterval = (typeof TIME_INTERVALS)[number];

/** The count comparisons (`exact` and its older spelling `eq` both mean equal). */
export const COUNT_OPERATORS = ['gte', 'lte', 'exact', 'eq'] as const;
export type CountOperator = (typeof COUNT_OPERATORS)[number];

export interface BehaviouralFilter {
  type: 'behavioral';
  value: BehaviouralValue;
  /** The event's name, or the action's id. */
  key: string | number;
  event_type: 'events' | 'actions';
  time_value?: number | string;
  time_interval?: TimeInterval;
  operator?: CountOperator;
  operator_value?: number | string;
  seq_time_value?: number | string;
  seq_time_interval?: TimeInterval;
  total_periods?: number | string;
  min_periods?: number | string;
  explicit_datetime?: string;
  negation?: boolean;
}

/** The longest look-back a condition may ask for (all of its periods together): ten years, so a scan is bounded. */
export const MAX_WINDOW_DAYS = 3660;
/** Most times a count may name, and most periods `performed_event_regularly` may split its window into. */
export const MAX_COUNT = 1_000_000;
export const MAX_PERIODS = 100;

const INTERVAL_DAYS: Record<TimeInterval, number> = { hour: 1 / 24, day: 1, week: 7, month: 31, year: 366 };

/**
 * `now` moved back by `n` intervals, as ClickHouse's `now() - INTERVAL n MONTH` (and Python's
 * relativedelta) move it: a month back from March 31 is the last day of February, not March 3.
 */
export function intervalBefore(now: Date, n: number, interval: TimeInterval): Date {
  if (interval === 'hour') return new Date(now.getTime() - n * 3_600_000);
  if (interval === 'day' || interval === 'week') return new Date(now.getTime() - n * (interval === 'week' ? 7 : 1) * 86_400_000);
  const months = interval === 'year' ? 12 * n : n;
  const date = new Date(now.getTime());
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() - months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return date;
}

/** What each kind reads besides `key`: the window, a count, a second (more recent) window, periods. */
const NEEDS: Record<BehaviouralValue, { count?: true; seq?: true; periods?: true; explicit?: true }> = {
  performed_event: { explicit: true },
  performed_event_multiple: { count: true, explicit: true },
  performed_event_first_time: {},
  stopped_performing_event: { seq: true },
  restarted_performing_event: { seq: true },
  performed_event_regularly: { count: true, periods: true },
};

/** A whole number from a number or its digits (PostHog's UI sends both), within bounds; else null. */
export function wholeNumber(value: unknown, min: number, max: number): number | null {
  const n = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : null;
}

/** An action's id as a behavioural condition names it, or null. */
export const actionIdOf = (key: unknown): number | null => rowId(key);

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The first thing wrong with a behavioural condition, named by its attribute path under `at`, or
 * null. Windows and counts are bounded, so no condition can ask for an unbounded scan.
 */
export function behaviouralFilterProblem(filter: unknown, at: string, now: Date): FilterProblem | null {
  const problem = (field: string, detail: string): FilterProblem => ({ attr: `${at}.${field}`, detail: `${at}.${field} ${detail}.` });
  if (!isObject(filter)) return { attr: at, detail: `${at} must be an object.` };
  if (!(BEHAVIOURAL_VALUES as readonly string[]).includes(filter.value as string)) return problem('value', `must be one of ${BEHAVIOURAL_VALUES.join(', ')}`);
  const value = filter.value as BehaviouralValue;
  if (filter.event_type !== 'events' && filter.event_type !== 'actions') return problem('event_type', 'must be "events" or "actions"');
  if (filter.event_type === 'events' && (typeof filter.key !== 'string' || filter.key === '' || filter.key.length > 400)) return problem('key', 'must be the name of an event');
  if (filter.event_type === 'actions' && actionIdOf(filter.key) === null) return problem('key', "must be an action's id");
  if (filter.negation !== undefined && typeof filter.negation !== 'boolean') return problem('negation', 'must be true or false');
  const needs = NEEDS[value];

  const interval = (field: string): TimeInterval | FilterProblem =>
    (TIME_INTERVALS as readonly unknown[]).includes(filter[field]) ? (filter[field] as TimeInterval) : problem(field, `must be one of ${TIME_INTERVALS.join(', ')}`);
  /** Where the window starts. */
  const start = (valueField: string, intervalField: string, periods = 1): Date | FilterProblem => {
    const unit = interval(intervalField);
    if (typeof unit !== 'string') return unit;
    const n = wholeNumber(filter[valueField], 1, MAX_WINDOW_DAYS * 24);
    if (n === null || n * periods * INTERVAL_DAYS[unit] > MAX_WINDOW_DAYS) return problem(valueField, `must be a whole number from 1, looking back at most ${MAX_WINDOW_DAYS} days${periods > 1 ? ' over all periods' : ''}`);
    return intervalBefore(now, n, unit);
  };

  let periods = 1;
  if (needs.periods) {
    const total = wholeNumber(filter.total_periods, 1, MAX_PERIODS);
    if (total === null) return problem('total_periods', `must be a whole number from 1 to ${MAX_PERIODS}`);
    const min = wholeNumber(filter.min_periods, 1, total);
    if (min === null) return problem('min_periods', 'must be a whole number from 1 to total_periods');
    periods = total;
  }
  if (needs.count) {
    if (filter.operator !== undefined && !(COUNT_OPERATORS as readonly unknown[]).includes(filter.operator)) return problem('operator', `must be one of ${COUNT_OPERATORS.join(', ')}`);
    if (wholeNumber(filter.operator_value, 0, MAX_COUNT) === null) return problem('operator_value', `must be a whole number from 0 to ${MAX_COUNT}`);
  }
  if (needs.explicit && filter.explicit_datetime !== undefined && filter.explicit_datetime !== null) {
    const date = typeof filter.explicit_datetime === 'string' ? parseDateInput(filter.explicit_datetime, now) : null;
    if (!date || date.getTime() >= now.getTime() || now.getTime() - date.getTime() > MAX_WINDOW_DAYS * 86_400_000) {
      return problem('explicit_datetime', `must be an ISO 8601 date or a relative one such as -30d, in the past, at most ${MAX_WINDOW_DAYS} days ago`);
    }
    return null;
  }
  const window = start('time_value', 'time_interval', periods);
  if (!(window instanceof Date)) return window;
  if (needs.seq) {
    const seq = start('seq_time_value', 'seq_time_interval');
    if (!(seq instanceof Date)) return seq;
    if (seq.getTime() <= window.getTime()) return problem('seq_time_value', 'must name a shorter, more recent window than time_value');
  }
  return null;
}
