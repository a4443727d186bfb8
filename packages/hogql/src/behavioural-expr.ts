import { PropertyFilterError, behaviouralFilterProblem, intervalBefore, parseDateInput, wholeNumber, type BehaviouralFilter, type TimeInterval } from '@tributary/property-filters';
import type { Expr, SelectQuery } from './ast.js';
import { and, call, compare, constant, field } from './property-value-expr.js';

/**
 * A behavioural cohort condition (PostHog's `type: "behavioral"`) as the persons who meet it: one
 * pass over the project's events that match (`matches`: the event's name or the action's steps),
 * grouped by person, each kind a condition on counts or times within windows that end at `now`.
 * Every bound is a constant computed here from `now`, so a pinned clock pins the answer, and the
 * scan is bounded below by the earliest window for every kind that has one.
 */

const timestamp = field('timestamp');
const moment = (date: Date): Expr => call('toDateTime', constant(date.toISOString()));
const after = (date: Date): Expr => compare('>', timestamp, moment(date));
const notAfter = (date: Date): Expr => compare('<=', timestamp, moment(date));
const countIf = (...conditions: Expr[]): Expr => call('countIf', and(conditions));
const count = (condition: Expr, op: string, value: number): Expr => compare(op, countIf(condition), constant(value));

const COUNT_COMPARISONS: Record<string, string> = { gte: '>=', lte: '<=', exact: '==', eq: '==' };
/** The filter's count test, once validated. */
const countTest = (filter: BehaviouralFilter, counted: Expr): Expr => compare(COUNT_COMPARISONS[filter.operator ?? 'gte']!, counted, constant(wholeNumber(filter.operator_value, 0, Infinity)!));

/** Where a window of `periods` times the filter's `time_value` (or its `seq_time_value`) starts. */
function windowStart(filter: BehaviouralFilter, now: Date, which: 'time' | 'seq_time', periods = 1): Date {
  return intervalBefore(now, wholeNumber(filter[`${which}_value`], 1, Infinity)! * periods, filter[`${which}_interval`] as TimeInterval);
}

/** The persons' ids who meet `filter` (validated here too), given what an event must be to count. */
export function behaviouralPersonsQuery(filter: BehaviouralFilter, matches: Expr, now: Date, path: string): SelectQuery {
  const problem = behaviouralFilterProblem(filter, path, now);
  if (problem) throw new PropertyFilterError(problem.detail);
  // The lowest timestamp read; none where the condition looks at all of the person's history.
  let lowest: Date | null;
  let having: Expr;
  switch (filter.value) {
    case 'performed_event':
    case 'performed_event_multiple':
      lowest = filter.explicit_datetime ? parseDateInput(filter.explicit_datetime, now)! : windowStart(filter, now, 'time');
      having = filter.value === 'performed_event' ? compare('>', call('count'), constant(0)) : countTest(filter, call('count'));
      break;
    case 'performed_event_first_time':
      // Only the whole history tells that it was the first time.
      lowest = null;
      having = compare('>=', call('min', timestamp), moment(windowStart(filter, now, 'time')));
      break;
    case 'stopped_performing_event': {
      const recent = windowStart(filter, now, 'seq_time');
      lowest = windowStart(filter, now, 'time');
      having = and([count(notAfter(recent), '>', 0), count(after(recent), '==', 0)]);
      break;
    }
    case 'restarted_performing_event': {
      const start = windowStart(filter, now, 'time');
      const recent = windowStart(filter, now, 'seq_time');
      // Did it before the window (at any time), not in its earlier part, and again in its recent part.
      lowest = null;
      having = and([count(notAfter(start), '>', 0), count(and([after(start), notAfter(recent)]), '==', 0), count(after(recent), '>', 0)]);
      break;
    }
    case 'performed_event_regularly': {
      const total = wholeNumber(filter.total_periods, 1, Infinity)!;
      const bounds = Array.from({ length: total + 1 }, (_, p) => (p === 0 ? now : windowStart(filter, now, 'time', p)));
      lowest = bounds[total]!;
      const periods = Array.from({ length: total }, (_, p) => countTest(filter, countIf(after(bounds[p + 1]!), notAfter(bounds[p]!))));
      having = compare('>=', call('arraySum', { node: 'Array', exprs: periods }), constant(wholeNumber(filter.min_periods, 1, Infinity)!));
      break;
    }
  }
  return {
    node: 'SelectQuery',
    select: [field('person_id')],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: and([matches, ...(lowest ? [after(lowest)] : []), compare('<', timestamp, moment(now))]),
    group_by: [field('person_id')],
    having,
  };
}
