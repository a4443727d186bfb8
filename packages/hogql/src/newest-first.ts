import type { Expr, SelectLike, SelectQuery } from './ast.js';
import { containsAggregate } from './functions.js';

/** Whether any node of the tree (subqueries included) passes `test`. */
function someNode(value: unknown, test: (node: { node?: string; chain?: unknown[] }) => boolean): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return test(value) || Object.values(value).some((v) => someNode(v, test));
}

/**
 * The events fields whose conditions cost as much to test as the page saves: read through a join
 * to persons, which the bound's statement would build a second time, or JSON text to parse, which
 * it would parse for every row a second time (the look-back windows narrow those pages instead).
 */
const COSTLY = new Set(['person', 'pdi', 'person_id', 'poe', 'properties', 'person_properties', 'elements_chain', '$session_id']);

/**
 * The events' `timestamp` field of a select that reads events alone, if its first order is that
 * field descending and nothing between the rows and the order (grouping, distinct, windows,
 * array joins, CTEs) makes its rows other than the events' own.
 */
function newestFirstOrder(query: SelectQuery): Expr | null {
  const from = query.select_from;
  if (!from || from.next_join || from.sample || from.table_final || from.table.node !== 'Field' || from.table.chain.length !== 1 || from.table.chain[0] !== 'events') return null;
  if (query.group_by?.length || query.having || query.distinct || query.limit_by || query.array_join_list?.length || query.window_exprs || query.qualify || query.ctes) return null;
  if (query.select.some(containsAggregate) || someNode(query.select, (n) => n.node === 'WindowFunction')) return null;
  // `ORDER BY timestamp` names a select alias of that name before the column.
  if (query.select.some((e) => e.node === 'Alias' && e.alias === 'timestamp')) return null;
  const first = query.order_by?.[0];
  if (!first || first.order !== 'DESC' || first.expr.node !== 'Field') return null;
  const table = from.alias ?? 'events';
  const chain = first.expr.chain;
  const isTimestamp = (chain.length === 1 && chain[0] === 'timestamp') || (chain.length === 2 && chain[0] === table && chain[1] === 'timestamp');
  return isTimestamp ? first.expr : null;
}

/** The newest-first order's field, if the page's conditions are cheap enough to test twice. */
function newestFirstTimestamp(query: SelectQuery): Expr | null {
  const timestamp = newestFirstOrder(query);
  if (!timestamp) return null;
  const aliases = new Set(query.select.flatMap((e) => (e.node === 'Alias' ? [e.alias] : [])));
  const conditions = [query.where, query.prewhere];
  // A WHERE that reads a select alias cannot be copied without it.
  const costly = (name: unknown) => typeof name === 'string' && (aliases.has(name) || COSTLY.has(name));
  if (someNode(conditions, (n) => n.node === 'Field' && (n.chain ?? []).some(costly))) return null;
  // Conditions that read other tables would be read twice: the bound only pays for itself when its statement reads events alone.
  if (someNode(conditions, (n) => n.node === 'SelectQuery' || n.node === 'SelectSetQuery')) return null;
  return timestamp;
}

/**
 * For a page of events newest first (`ORDER BY timestamp DESC` first, rows the events' own),
 * the page narrowed to events after a time: when it holds as many rows as the page reads, it is
 * the whole page, ties included, since every event left out is older than every event kept.
 * Any conditions may stay: the narrowing is one more, on the events' own column. Null for any
 * other query.
 */
export function newestFirstWindow(query: SelectLike): ((after: Expr) => SelectQuery) | null {
  if (query.node !== 'SelectQuery') return null;
  const timestamp = newestFirstOrder(query);
  if (!timestamp) return null;
  return (after) => {
    const bound: Expr = { node: 'CompareOperation', op: '>', left: timestamp, right: after };
    return { ...query, where: query.where ? { node: 'And', exprs: [query.where, bound] } : bound };
  };
}

/**
 * A page of events newest first (`ORDER BY timestamp DESC LIMIT n`) bounded below by the time of
 * its `rows`-th newest event: a first statement reads only the matching events' timestamps, and
 * the page then reads its columns (JSON properties and all) for the few rows at or after that
 * time instead of for every row before sorting them. Rows outside the bound all come after the
 * page's last row, so the page (ties included) is the same. The bound is a PREWHERE, first of
 * all conditions, where ClickHouse uses it to skip the older days' granules (in WHERE, after the
 * page's own time range, 18.16 read them all).
 */
export function boundNewestFirst(query: SelectLike, rows: number): SelectLike {
  if (query.node !== 'SelectQuery') return query;
  const timestamp = newestFirstTimestamp(query);
  if (!timestamp) return query;
  const newest: SelectQuery = {
    node: 'SelectQuery',
    select: [{ node: 'Alias', alias: 'timestamp', expr: timestamp }],
    select_from: query.select_from,
    ...(query.where && { where: query.where }),
    ...(query.prewhere && { prewhere: query.prewhere }),
    order_by: [{ node: 'OrderExpr', expr: timestamp, order: 'DESC' }],
    limit: { node: 'Constant', value: rows },
  };
  const oldest: SelectQuery = {
    node: 'SelectQuery',
    select: [{ node: 'Call', name: 'min', args: [{ node: 'Field', chain: ['timestamp'] }] }],
    select_from: { node: 'JoinExpr', table: newest },
  };
  const bound: Expr = { node: 'CompareOperation', op: '>=', left: timestamp, right: oldest };
  return { ...query, prewhere: query.prewhere ? { node: 'And', exprs: [bound, query.prewhere] } : bound };
}
