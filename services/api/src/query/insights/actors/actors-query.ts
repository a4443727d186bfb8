import { MAX_LIMIT, queryError, type Expr, type OrderExpr, type SelectQuery } from '@tributary/hogql';
import { alias, call, compare, constant, field, from, or } from '../toolkit/hogql-builders.js';
import { seconds, timedRun, type InsightRunDeps } from '../toolkit/insight-series.js';
import { actorsOf, type ActorSet, type ActorsSource } from './insight-actors.js';

/**
 * PostHog's `ActorsQuery`: a page of persons with their properties, those behind one point of an
 * insight (`source`) or every person of the project. Columns are PostHog's names, taken from an
 * allow-list; the persons' rows are read by the printer under the project's guard like any other.
 */
export interface ActorsQueryRequest {
  kind: 'ActorsQuery';
  source?: ActorsSource | null;
  select?: string[] | null;
  orderBy?: string[] | null;
  search?: string | null;
  limit?: number | null;
  offset?: number | null;
  properties?: unknown[] | null;
}

export const DEFAULT_ACTORS_LIMIT = 100;

/** A person as PostHog's actor column gives it. */
export interface Actor {
  id: string;
  uuid: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string | null;
  is_identified: boolean;
  type: 'person';
}

/** The page's columns: [id, properties, created_at, is_identified, found, then the source's own (event_count, returned)]. */
const ROW = { id: 0, properties: 1, createdAt: 2, identified: 3, found: 4 } as const;
type Extra = ActorSet['columns'] extends ReadonlySet<infer E> ? E : never;
/** The column a source's own column is asked for by. */
const ASKED_AS: Record<Extra, string> = { event_count: 'event_count', returned: 'appearances' };

const PLAIN_COLUMNS = ['actor', 'person', 'id', 'created_at', 'event_count', 'appearances'] as const;
const PROPERTY_COLUMN = /^(?:person\.)?properties\.(.+)$/;

/** The columns asked for, each a name PostHog's actors list takes; anything else is a 400 naming it. */
function columnsOf(request: ActorsQueryRequest, available: ReadonlySet<Extra>): string[] {
  const own = [...available].map((column) => ASKED_AS[column]);
  const select = request.select?.length ? request.select : ['actor', ...own];
  for (const column of select) {
    const plain = (PLAIN_COLUMNS as readonly string[]).includes(column);
    if (!plain && !PROPERTY_COLUMN.test(column)) throw queryError(`select: ${JSON.stringify(column)} is not a column of actors; use ${PLAIN_COLUMNS.join(', ')} or properties.<key>`);
    if ((column === 'event_count' || column === 'appearances') && !own.includes(column)) throw queryError(`select: ${column} is not a column of this source's actors`);
  }
  return select;
}

const SORTABLE: Record<string, Expr> = { id: field('a', 'actor'), actor: field('a', 'actor'), created_at: field('p', 'created_at') };

function orderOf(request: ActorsQueryRequest, available: ReadonlySet<Extra>): OrderExpr[] {
  const byId: OrderExpr = { node: 'OrderExpr', expr: field('a', 'actor'), order: 'ASC' };
  const requested = request.orderBy ?? [];
  if (requested.length === 0) {
    const first: OrderExpr = available.has('event_count') ? { node: 'OrderExpr', expr: field('a', 'event_count'), order: 'DESC' } : { node: 'OrderExpr', expr: field('p', 'created_at'), order: 'DESC' };
    return [first, byId];
  }
  const order = requested.map((text): OrderExpr => {
    const match = /^\s*([a-z_]+)(?:\s+(ASC|DESC))?\s*$/i.exec(text);
    const name = match?.[1]?.toLowerCase() ?? '';
    const expr = name === 'event_count' && available.has('event_count') ? field('a', 'event_count') : Object.hasOwn(SORTABLE, name) ? SORTABLE[name] : undefined;
    if (!match || !expr) throw queryError(`orderBy: ${JSON.stringify(text)} is not a column actors sort by; use id, created_at${available.has('event_count') ? ', event_count' : ''}, each ASC or DESC`);
    return { node: 'OrderExpr', expr, order: (match[2]?.toUpperCase() ?? 'ASC') as 'ASC' | 'DESC' };
  });
  return [...order, byId];
}

/** Whether a person matches the search: their id, one of their distinct ids, or text in their properties. */
function searchCondition(search: string): Expr {
  const byDistinctId: SelectQuery = { node: 'SelectQuery', select: [call('toString', field('person_id'))], select_from: from('person_distinct_ids'), where: compare('==', field('distinct_id'), constant(search)) };
  return or([
    compare('==', call('toString', field('a', 'actor')), constant(search)),
    compare('in', call('toString', field('a', 'actor')), byDistinctId),
    compare('>', call('positionCaseInsensitive', field('p', 'properties'), constant(search)), constant(0)),
  ]);
}

/** The page: the point's persons joined with their rows (a person the insight counted may have none: it stays, without properties). */
function pageQuery(set: ActorSet, request: ActorsQueryRequest, limit: number, offset: number): SelectQuery {
  const extras = [...set.columns];
  // Not the joined id: 18.16 gives the right-hand key of an unmatched row the left one's value. A stored person's properties are never empty text.
  const found = call('notEmpty', field('p', 'properties'));
  const search = request.search?.trim();
  return {
    node: 'SelectQuery',
    select: [
      alias('id', call('toString', field('a', 'actor'))),
      alias('properties', field('p', 'properties')),
      alias('created_at', field('p', 'created_at')),
      alias('is_identified', field('p', 'is_identified')),
      alias('found', found),
      ...extras.map((name) => alias(name, field('a', name))),
    ],
    select_from: {
      node: 'JoinExpr',
      table: set.query,
      alias: 'a',
      next_join: { node: 'JoinExpr', table: { node: 'Field', chain: ['persons'] }, alias: 'p', join_type: 'LEFT JOIN', constraint: { node: 'JoinConstraint', expr: compare('==', field('a', 'actor'), field('p', 'id')), constraint_type: 'ON' } },
    },
    ...(search && { where: searchCondition(search) }),
    order_by: orderOf(request, set.columns),
    limit: constant(limit + 1),
    ...(offset > 0 && { offset: constant(offset) }),
  };
}

/** Each person's distinct ids, sorted for a stable answer. */
function distinctIdsQuery(ids: string[]): SelectQuery {
  return {
    node: 'SelectQuery',
    select: [call('toString', field('person_id')), call('arraySort', call('groupArray', field('distinct_id')))],
    select_from: from('person_distinct_ids'),
    where: compare('in', call('toString', field('person_id')), { node: 'Tuple', exprs: ids.map(constant) }),
    group_by: [call('toString', field('person_id'))],
  };
}

/** Every person of the project, for an ActorsQuery without a source. */
const everyone = (): ActorSet => ({ query: { node: 'SelectQuery', select: [alias('actor', field('id'))], select_from: from('persons') }, columns: new Set() });

const parseProperties = (text: unknown): Record<string, unknown> => {
  if (typeof text !== 'string' || text === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

const isoOf = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? `${value.replace(' ', 'T')}Z` : null);

function cell(column: string, actor: Actor, row: readonly unknown[], set: ActorSet): unknown {
  const own = (name: Extra) => row[ROW.found + 1 + [...set.columns].indexOf(name)];
  switch (column) {
    case 'actor':
    case 'person':
      return actor;
    case 'id':
      return actor.id;
    case 'created_at':
      return actor.created_at;
    case 'event_count':
      return Number(own('event_count'));
    case 'appearances': {
      // As the retention cells count them: at the cohort's own interval always, later where they returned.
      const returned = new Set((own('returned') as unknown[]).map(Number));
      return Array.from({ length: set.intervals ?? 0 }, (_, i) => i === 0 || returned.has(i));
    }
    default: {
      const key = PROPERTY_COLUMN.exec(column)![1]!;
      return Object.hasOwn(actor.properties, key) ? actor.properties[key] : null;
    }
  }
}

export async function runActorsQuery(request: ActorsQueryRequest, deps: InsightRunDeps): Promise<object> {
  const started = performance.now();
  const timings: { k: string; t: number }[] = [];
  if (request.properties?.length) throw queryError('properties: filtering actors by property is not supported yet; filter the source insight');
  const limit = request.limit ?? DEFAULT_ACTORS_LIMIT;
  const offset = request.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw queryError(`limit: give a whole number from 1 to ${MAX_LIMIT}`);
  if (!Number.isInteger(offset) || offset < 0) throw queryError('offset: give a whole number from 0');
  const run = timedRun(deps, timings);
  const set = request.source ? await actorsOf(request.source, { ...deps, run }) : everyone();
  const columns = columnsOf(request, set.columns);
  const page = pageQuery(set, request, limit, offset);
  const rows = (await run(page)).data;
  const hasMore = rows.length > limit;
  const shown = rows.slice(0, limit);
  const ids = shown.map((row) => String(row[ROW.id]));
  const distinctIds = new Map<string, string[]>();
  if (ids.length) for (const [id, list] of (await run(distinctIdsQuery(ids))).data) distinctIds.set(String(id), (list as unknown[]).map(String));
  const results = shown.map((row) => {
    const id = String(row[ROW.id]);
    const found = Number(row[ROW.found]) === 1;
    const actor: Actor = {
      id,
      uuid: id,
      distinct_ids: distinctIds.get(id) ?? [],
      properties: found ? parseProperties(row[ROW.properties]) : {},
      created_at: found ? isoOf(row[ROW.createdAt]) : null,
      is_identified: found && Number(row[ROW.identified]) === 1,
      type: 'person',
    };
    return columns.map((column) => cell(column, actor, row, set));
  });
  timings.push({ k: '.', t: seconds(started) });
  return {
    results,
    columns,
    types: columns.map((c) => (c === 'actor' || c === 'person' ? 'Tuple' : c === 'event_count' ? 'UInt64' : c === 'appearances' ? 'Array(Bool)' : 'String')),
    hasMore,
    limit,
    offset,
    hogql: deps.hogql(page),
    timings,
    is_cached: false,
    last_refresh: deps.now.toISOString(),
  };
}
