import type { SelectQuery } from '@tributary/hogql';

/** The time of the project's first event of these names (any event when one is null), for `date_from: 'all'`. */
export function firstEventQuery(events: readonly (string | null | undefined)[]): SelectQuery {
  const names = events.filter((e): e is string => typeof e === 'string');
  return {
    node: 'SelectQuery',
    select: [{ node: 'Call', name: 'toUnixTimestamp', args: [{ node: 'Call', name: 'min', args: [{ node: 'Field', chain: ['timestamp'] }] }] }],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    ...(names.length === events.length && {
      where: { node: 'CompareOperation', op: 'in', left: { node: 'Field', chain: ['event'] }, right: { node: 'Tuple', exprs: names.map((value) => ({ node: 'Constant' as const, value })) } },
    }),
  };
}

/** The first event's time, or null when there is none (min() over no rows is the epoch). */
export function momentOf(rows: readonly unknown[][]): Date | null {
  const seconds = Number(rows[0]?.[0]);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : null;
}
