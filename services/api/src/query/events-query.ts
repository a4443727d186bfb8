import { containsAggregate, parseExpr, parseOrderExpr, queryError, type Expr, type FilterContext, type OrderExpr, type SelectQuery } from '@tributary/hogql';
import { parseDateInput, type StoredPropertyFilter } from '@tributary/property-filters';
import { at, call, compare, constant, field } from './insights/toolkit/hogql-builders.js';
import { propertyConditions } from './insights/toolkit/property-conditions.js';

/** PostHog's `EventsQuery`: a list of events, or aggregates of them, from HogQL expressions. */
export interface EventsQueryRequest {
  kind: 'EventsQuery';
  select: string[];
  where?: string[];
  orderBy?: string[];
  event?: string | null;
  events?: string[] | null;
  properties?: StoredPropertyFilter[];
  after?: string;
  before?: string;
  limit?: number;
  offset?: number;
  personId?: string;
}

/** How a select entry's values are shaped in the answer: `*` and `person` become objects, as PostHog's. */
export type ColumnShape = 'value' | 'event' | 'person';

export interface BuiltEventsQuery {
  ast: SelectQuery;
  columns: string[];
  shapes: ColumnShape[];
  /** A list of events newest first: its range, which the page may read in look-back windows (`readNewestFirst`). */
  newestFirst?: { before: Date; after?: Date };
}

const EVENT_FIELDS = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at'];
const PERSON_FIELDS = ['person.id', 'person.created_at', 'person.properties', 'distinct_id'];

/** A select entry's label after `--` names the column for people, not the query (PostHog's convention). */
const expressionOf = (entry: string) => entry.split('--')[0]!.trim();

function tupleOf(fields: string[]): Expr {
  return call('tuple', ...fields.map((f) => field(...f.split('.'))));
}

function timeBound(value: string, now: Date, attr: string): Date {
  const date = parseDateInput(value, now);
  if (!date) throw queryError(`${attr} must be an ISO 8601 date-time or a relative date such as -24h: ${JSON.stringify(value)}`);
  return date;
}

const isTimestamp = (expr: Expr) => expr.node === 'Field' && expr.chain.length === 1 && expr.chain[0] === 'timestamp';

/** The query reading only events after `from`: a look-back window of a newest-first page. */
export function eventsAfter(ast: SelectQuery, from: Date): SelectQuery {
  const bound = compare('>', field('timestamp'), at(from));
  return { ...ast, where: ast.where ? { node: 'And', exprs: [ast.where, bound] } : bound };
}

/**
 * Builds the HogQL tree of an EventsQuery, as PostHog's runner does: the select entries are
 * HogQL expressions; with any aggregate among them the others become the GROUP BY and `where`
 * entries that aggregate go to HAVING; the window defaults to the last 24 hours; the order to
 * `timestamp DESC` for event lists.
 */
export async function buildEventsQuery(request: EventsQueryRequest, filters: FilterContext): Promise<BuiltEventsQuery> {
  const { now } = filters;
  const entries = request.select.length ? request.select : ['*'];
  const shapes: ColumnShape[] = [];
  const select: Expr[] = [];
  for (const entry of entries) {
    const text = expressionOf(entry);
    if (text === '*') {
      select.push(tupleOf(EVENT_FIELDS));
      shapes.push('event');
    } else if (text === 'person') {
      select.push(tupleOf(PERSON_FIELDS));
      shapes.push('person');
    } else {
      select.push(await parseExpr(text));
      shapes.push('value');
    }
  }
  const aggregated = select.some(containsAggregate);

  const where: Expr[] = [];
  const having: Expr[] = [];
  for (const text of request.where ?? []) {
    const expr = await parseExpr(text);
    (containsAggregate(expr) ? having : where).push(expr);
  }
  const events = [...(request.event ? [request.event] : []), ...(request.events ?? [])];
  if (events.length === 1) where.push(compare('==', field('event'), constant(events[0]!)));
  else if (events.length > 1) where.push(compare('in', field('event'), { node: 'Tuple', exprs: events.map(constant) }));
  if (request.personId) where.push(compare('==', call('toString', field('person_id')), constant(request.personId)));
  const before = timeBound(request.before ?? new Date(now.getTime() + 5000).toISOString(), now, 'before');
  const after = request.after === 'all' ? undefined : timeBound(request.after ?? '-24h', now, 'after');
  where.push(compare('<', field('timestamp'), at(before)));
  if (after) where.push(compare('>', field('timestamp'), at(after)));
  where.push(...propertyConditions(request.properties ?? [], filters));

  let orderBy: OrderExpr[];
  if (request.orderBy?.length) orderBy = await Promise.all(request.orderBy.map((o) => parseOrderExpr(o)));
  else if (entries.some((e) => expressionOf(e) === '*' || expressionOf(e) === 'timestamp') && !aggregated) orderBy = [{ node: 'OrderExpr', expr: field('timestamp'), order: 'DESC' }];
  else if (aggregated) orderBy = [{ node: 'OrderExpr', expr: select.find(containsAggregate)!, order: 'DESC' }];
  else orderBy = [{ node: 'OrderExpr', expr: select[0]!, order: 'ASC' }];

  const ast: SelectQuery = {
    node: 'SelectQuery',
    select,
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: where.length === 1 ? where[0]! : { node: 'And', exprs: where },
    ...(aggregated && { group_by: select.filter((e) => !containsAggregate(e)) }),
    ...(having.length && { having: having.length === 1 ? having[0]! : { node: 'And', exprs: having } }),
    order_by: orderBy,
    // The limit is the printer's: it asks for one row more than `limit` to tell whether there are more.
    ...(request.offset && { offset: constant(request.offset) }),
  };
  const newest = orderBy[0]!;
  // The window bounds the events' timestamp: only when the order's is that one, not a select alias of that name.
  const renamesTimestamp = select.some((e) => e.node === 'Alias' && e.alias === 'timestamp');
  const newestFirst = !aggregated && having.length === 0 && !renamesTimestamp && newest.order === 'DESC' && isTimestamp(newest.expr);
  return { ast, columns: entries.map(expressionOf), shapes, ...(newestFirst && { newestFirst: { before, ...(after && { after }) } }) };
}

/** ClickHouse's `YYYY-MM-DD hh:mm:ss` (always UTC here) as the ISO 8601 text PostHog answers with. */
export function isoDateTime(value: unknown): unknown {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value) ? `${value.replace(' ', 'T')}Z` : value;
}

/** A `*` or `person` column's tuple as the object PostHog answers with. */
export function shapeValue(shape: ColumnShape, value: unknown): unknown {
  if (shape === 'value' || !Array.isArray(value)) return value;
  const parse = (text: unknown) => {
    try {
      return typeof text === 'string' && text ? JSON.parse(text) : {};
    } catch {
      return {};
    }
  };
  if (shape === 'event') {
    const [uuid, event, properties, timestamp, distinct_id, elements_chain, created_at] = value;
    return { uuid, event, properties: parse(properties), timestamp: isoDateTime(timestamp), distinct_id, elements_chain, created_at: isoDateTime(created_at) };
  }
  const [uuid, created_at, properties, distinct_id] = value;
  return { uuid, created_at: isoDateTime(created_at), properties: parse(properties), distinct_id };
}
