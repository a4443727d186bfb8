import { jsonPropertyText, queryError, type Expr, type JoinExpr, type OrderExpr, type SelectQuery } from '@tributary/hogql';

/**
 * The events list's reads as HogQL trees, printed (and guarded to the project) by the printer like
 * any query: the filters the list takes, a page of ids, the rows of a page, values of a property.
 */

export const VALUES_LIMIT = 50;

export interface EventListFilters {
  event?: string;
  /** Distinct ids the event must have: one from `distinct_id`, or all of a person's. */
  distinctIds?: readonly string[];
  after?: Date;
  before?: Date;
  uuid?: string;
  /** Property filters and `where` expressions, as HogQL over the events table. */
  conditions?: readonly Expr[];
}

const field = (...chain: string[]): Expr => ({ node: 'Field', chain });
const constant = (value: string | number): Expr => ({ node: 'Constant', value });
const call = (name: string, ...args: Expr[]): Expr => ({ node: 'Call', name, args });
const compare = (op: string, left: Expr, right: Expr): Expr => ({ node: 'CompareOperation', op, left, right });
const alias = (name: string, expr: Expr): Expr => ({ node: 'Alias', alias: name, expr });
const at = (date: Date | string): Expr => call('toDateTime', constant(typeof date === 'string' ? date : date.toISOString()));
const desc = (expr: Expr): OrderExpr => ({ node: 'OrderExpr', expr, order: 'DESC' });
const events: JoinExpr = { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } };

function whereOf(filters: EventListFilters): Expr {
  const conditions: Expr[] = [];
  if (filters.event !== undefined) conditions.push(compare('==', field('event'), constant(filters.event)));
  if (filters.distinctIds !== undefined) conditions.push(compare('in', field('distinct_id'), { node: 'Constant', value: [...filters.distinctIds] }));
  if (filters.after) conditions.push(compare('>', field('timestamp'), at(filters.after)));
  if (filters.before) conditions.push(compare('<', field('timestamp'), at(filters.before)));
  if (filters.uuid !== undefined) conditions.push(compare('==', call('toString', field('uuid')), constant(filters.uuid)));
  conditions.push(...(filters.conditions ?? []));
  return conditions.length === 0 ? constant(1) : { node: 'And', exprs: conditions };
}

/** Newest first; `LIMIT 1 BY` hides replayed copies that ReplacingMergeTree has not merged yet; one row more than asked tells whether a next page exists. */
function newestFirst(select: Expr[], where: Expr, uuid: Expr, limit: number, offset: number): SelectQuery {
  return {
    node: 'SelectQuery',
    select,
    select_from: events,
    where,
    order_by: [desc(field('timestamp')), desc(field('timestamp_ms')), desc(uuid)],
    limit_by: { node: 'LimitByExpr', n: constant(1), exprs: [uuid] },
    limit: constant(limit + 1),
    ...(offset > 0 && { offset: constant(offset) }),
  };
}

/** The stored-event columns of `EventRow`: the person as the row recorded it (`poe`), for events whose distinct id has none now. */
const EVENT_ROW_SELECT: Expr[] = [
  alias('id', call('toString', field('uuid'))),
  ...['event', 'distinct_id', 'properties', 'timestamp', 'timestamp_ms', 'elements_chain'].map((name) => field(name)),
  alias('person_id', call('toString', field('poe', 'id'))),
  alias('person_properties', field('poe', 'properties')),
];

/** A page of stored events, or of the client's `select` expressions (named `c0`, `c1`, ...). */
export function listEventsQuery(filters: EventListFilters, limit: number, offset: number, select?: readonly Expr[]): SelectQuery {
  if (!select) return newestFirst(EVENT_ROW_SELECT, whereOf(filters), field('id'), limit, offset);
  return newestFirst([...select.map((expr, i) => alias(`c${i}`, expr)), alias('_uuid', call('toString', field('uuid')))], whereOf(filters), field('_uuid'), limit, offset);
}

/**
 * The first step of a stored-events page: which events, newest first. It reads only the sort
 * columns (and whatever the filters need), never `properties`, so a page of a large project does
 * not drag every event's JSON through the sort; `eventsByIdQuery` then fetches just those rows.
 */
export function pageOfEventsQuery(filters: EventListFilters, limit: number, offset: number): SelectQuery {
  return newestFirst([alias('id', call('toString', field('uuid'))), alias('ts', call('toString', field('timestamp')))], whereOf(filters), field('uuid'), limit, offset);
}

/** The stored-event rows of a page found by `pageOfEventsQuery`; the time bounds let ClickHouse skip other days. */
export function eventsByIdQuery(ids: readonly string[], from: string, to: string): SelectQuery {
  return {
    node: 'SelectQuery',
    select: EVENT_ROW_SELECT,
    select_from: events,
    where: {
      node: 'And',
      exprs: [
        compare('>=', field('timestamp'), at(from)),
        compare('<=', field('timestamp'), at(to)),
        compare('in', field('uuid'), { node: 'Tuple', exprs: ids.map((id) => call('toUUID', constant(id))) }),
      ],
    },
    limit_by: { node: 'LimitByExpr', n: constant(1), exprs: [field('id')] },
    limit: constant(ids.length),
  };
}

/** Distinct values of one event property, most frequent first, for autocomplete. */
export function propertyValuesQuery(key: string, contains: string | undefined, event: string | undefined): SelectQuery {
  const value = jsonPropertyText(field('properties'), key);
  const conditions: Expr[] = [call('visitParamHas', field('properties'), constant(key))];
  if (contains) conditions.push(compare('>', call('positionCaseInsensitive', value, constant(contains)), constant(0)));
  if (event) conditions.push(compare('==', field('event'), constant(event)));
  return {
    node: 'SelectQuery',
    select: [alias('name', value), alias('c', call('count'))],
    select_from: events,
    where: { node: 'And', exprs: conditions },
    group_by: [field('name')],
    order_by: [desc(field('c')), { node: 'OrderExpr', expr: field('name'), order: 'ASC' }],
    limit: constant(VALUES_LIMIT),
  };
}

/**
 * A client's `select` or `where` expression as the list reads it: `person.properties` as at the
 * event (the row's own copy, with no join), as the list always answered; other person fields need
 * the person join, which the list does not make.
 */
export function onStoredPerson(expr: Expr): Expr {
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const value = node as Record<string, unknown>;
    // A subquery reads its own tables, where these names mean what they mean in any query.
    if (value.node === 'SelectQuery' || value.node === 'SelectSetQuery') return value;
    if (value.node === 'Field') {
      const chain = value.chain as (string | number)[];
      const [head, next] = chain[0] === 'events' ? chain.slice(1) : chain;
      if (head === 'person' && next === 'properties') return { ...value, chain: ['poe', ...chain.slice(chain.indexOf('person') + 1)] };
      if (head === 'person' || head === 'pdi' || head === 'person_id') throw queryError('person fields are not available here; use the query endpoint');
      return value;
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]));
  };
  return rewrite(expr) as Expr;
}
