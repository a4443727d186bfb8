import type { SelectQuery } from '@tributary/hogql';
import { call, compare, constant, field, from } from './hogql-builders.js';

/** The time of the project's first event of these names (any event when one is null), for `date_from: 'all'`. */
export function firstEventQuery(events: readonly (string | null | undefined)[]): SelectQuery {
  const names = events.filter((e): e is string => typeof e === 'string');
  return {
    node: 'SelectQuery',
    select: [call('toUnixTimestamp', call('min', field('timestamp')))],
    select_from: from('events'),
    ...(names.length === events.length && { where: compare('in', field('event'), { node: 'Tuple', exprs: names.map(constant) }) }),
  };
}

/** The first event's time, or null when there is none (min() over no rows is the epoch). */
export function momentOf(rows: readonly unknown[][]): Date | null {
  const seconds = Number(rows[0]?.[0]);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : null;
}
