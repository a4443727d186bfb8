import { jsonRawValue, queryError, type Expr, type SelectQuery } from '@tributary/hogql';
import { alias, call, compare, constant, field } from './hogql-builders.js';

/** A breakdown as PostHog's insights give it: by an event, person or group property, the top values by each query's own aggregate. */
export interface BreakdownFilter {
  breakdown?: string | null;
  breakdown_type?: 'event' | 'person' | 'group' | null;
  breakdown_group_type_index?: number | null;
  breakdown_limit?: number;
}

export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$';
export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$';
export const DEFAULT_BREAKDOWN_LIMIT = 25;

/**
 * A property of the event's group of one type. The project's groups of that type are read once,
 * as two constant arrays (keys, values) sorted alike, and looked up with `transform` (a hash
 * lookup): 18.16 allows one join per SELECT, and the person join may already hold it.
 */
function groupPropertyExpr(index: number, key: string): Expr {
  const pairs = call('arraySort', call('groupArray', call('tuple', field('key'), call('ifNull', field('properties', key), constant('')))));
  const column = (element: number): SelectQuery => ({
    node: 'SelectQuery',
    select: [call('arrayMap', { node: 'Lambda', args: ['pair'], expr: call('tupleElement', field('pair'), constant(element)) }, pairs)],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['groups'] } },
    where: compare('==', field('index'), constant(index)),
  });
  return call('nullIf', call('transform', field(`$group_${index}`), column(1), column(2), constant('')), constant(''));
}

/** The breakdown's value of a row: text, with NULL (absent, empty) as PostHog's null label. */
export function breakdownValueExpr(filter: BreakdownFilter): Expr {
  const key = filter.breakdown;
  if (!key) throw queryError('breakdownFilter.breakdown must name a property');
  const type = filter.breakdown_type ?? 'event';
  let value: Expr;
  if (type === 'event') value = field('properties', key);
  else if (type === 'person') value = field('person', 'properties', key);
  else if (type === 'group') {
    const index = filter.breakdown_group_type_index;
    if (index === undefined || index === null || !Number.isInteger(index) || index < 0 || index > 4) throw queryError('breakdownFilter: a group breakdown needs breakdown_group_type_index from 0 to 4');
    value = groupPropertyExpr(index, key);
  } else throw queryError(`breakdownFilter.breakdown_type ${type} is not supported; use event, person or group`);
  return call('ifNull', value, constant(BREAKDOWN_NULL));
}

/**
 * What a breakdown's rows can be grouped by, and the value from it: an event property by its raw
 * JSON, made text once per group rather than once per event (the text takes a second pass over
 * each event's value); the others by their value.
 */
export function breakdownGrouping(filter: BreakdownFilter): { key: Expr; valueOf: (key: Expr) => Expr } {
  const value = breakdownValueExpr(filter);
  if ((filter.breakdown_type ?? 'event') !== 'event') return { key: value, valueOf: (key) => key };
  return { key: call('visitParamExtractRaw', field('properties'), constant(filter.breakdown!)), valueOf: (raw) => call('ifNull', jsonRawValue(raw), constant(BREAKDOWN_NULL)) };
}

/** The top breakdown values of the rows `where` selects, by `aggregate`, one more than the limit to tell whether an "other" is needed. */
export function breakdownValuesQuery(filter: BreakdownFilter, aggregate: Expr, where: Expr): SelectQuery {
  const limit = filter.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT;
  return {
    node: 'SelectQuery',
    select: [alias('breakdown_value', breakdownValueExpr(filter)), alias('total', aggregate)],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where,
    group_by: [field('breakdown_value')],
    order_by: [
      { node: 'OrderExpr', expr: field('total'), order: 'DESC' },
      { node: 'OrderExpr', expr: field('breakdown_value'), order: 'ASC' },
    ],
    limit: constant(limit + 1),
  };
}

/** The top `limit` values, and whether more were found (their rows go to the "other" series). */
export function topBreakdownValues(rows: readonly unknown[][], limit: number): { values: string[]; other: boolean } {
  const values = rows.map((r) => String(r[0]));
  return { values: values.slice(0, limit), other: values.length > limit };
}
