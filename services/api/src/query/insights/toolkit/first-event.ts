import type { Expr, SelectQuery } from '@tributary/hogql';
import { call, field, from, or } from './hogql-builders.js';

/** The time of the project's first event meeting any of these series' conditions (any event when one is null), for `date_from: 'all'`. */
export function firstEventQuery(conditions: readonly (Expr | null)[]): SelectQuery {
  const some = conditions.filter((c): c is Expr => c !== null);
  return {
    node: 'SelectQuery',
    select: [call('toUnixTimestamp', call('min', field('timestamp')))],
    // SAMPLE 1 reads every event, and withSample keeps a SAMPLE the query has: a sampled insight covers the same range as the whole.
    select_from: { ...from('events')!, sample: { node: 'SampleExpr', sample_value: { node: 'RatioExpr', left: { node: 'Constant', value: 1 } } } },
    ...(some.length === conditions.length && some.length > 0 && { where: or(some) }),
  };
}

/** The first event's time, or null when there is none (min() over no rows is the epoch). */
export function momentOf(rows: readonly unknown[][]): Date | null {
  const seconds = Number(rows[0]?.[0]);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : null;
}
