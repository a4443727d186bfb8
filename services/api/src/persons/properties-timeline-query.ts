import type { Expr, SelectQuery } from '@tributary/hogql';

/** Events scanned for a properties timeline, oldest first. */
export const TIMELINE_EVENT_LIMIT = 10_000;

const field = (...chain: string[]): Expr => ({ node: 'Field', chain });
const call = (name: string, ...args: Expr[]): Expr => ({ node: 'Call', name, args });

/**
 * A person's events with the person's properties as each recorded them (`poe`), oldest first, for
 * the printer to guard to the project: the events the person was recorded on, merges or not.
 */
export function propertiesTimelineQuery(personUuid: string): SelectQuery {
  return {
    node: 'SelectQuery',
    select: [{ node: 'Alias', alias: 'ts', expr: call('toString', field('timestamp')) }, { node: 'Alias', alias: 'person_properties', expr: field('poe', 'properties') }],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: { node: 'CompareOperation', op: '==', left: call('toString', field('poe', 'id')), right: { node: 'Constant', value: personUuid } },
    order_by: [
      { node: 'OrderExpr', expr: field('timestamp'), order: 'ASC' },
      { node: 'OrderExpr', expr: field('uuid'), order: 'ASC' },
    ],
    limit_by: { node: 'LimitByExpr', n: { node: 'Constant', value: 1 }, exprs: [field('uuid')] },
    limit: { node: 'Constant', value: TIMELINE_EVENT_LIMIT },
  };
}
