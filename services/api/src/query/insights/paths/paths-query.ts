import { containsAggregate, parseExpr, queryError, type Expr, type FilterContext, type SelectQuery } from '@tributary/hogql';
import { regexProblem, type StoredPropertyFilter } from '@tributary/property-filters';
import type { Period } from '../toolkit/insight-calendar.js';
import { firstEventQuery, momentOf } from '../toolkit/first-event.js';
import { seconds, timedRun, type InsightResponse, type InsightRunDeps } from '../toolkit/insight-series.js';
import { alias, and, array, at, call, compare, constant, field, from, lambda, minus, or } from '../toolkit/hogql-builders.js';
import { propertyConditions } from '../toolkit/property-conditions.js';
import { samplingFactorOf, scaledRows, type Sampled } from '../toolkit/sampling.js';

/**
 * PostHog's `PathsQuery`: the most travelled edges between consecutive steps of persons' paths.
 * As PostHog's runner: a person's events (pageviews by `$current_url` without its trailing slash,
 * screens by `$screen_name`, other events by name, or a HogQL expression), after path cleaning,
 * groupings and exclusions, are split into sessions at 30 minutes without one; each session's
 * repeated steps collapse into one (the last), it is cut from its start point and to its end point,
 * kept to `stepLimit` steps, and each pair of consecutive steps is an edge from
 * `<n>_<step>` to `<n+1>_<step>`. Edges are counted over every session, the heaviest first.
 */
export const PATH_TYPES = ['$pageview', '$screen', 'custom_event', 'hogql'] as const;
export type PathType = (typeof PATH_TYPES)[number];

export interface PathCleaningFilter {
  alias?: string | null;
  regex?: string | null;
}

export interface PathsFilter {
  includeEventTypes?: PathType[] | null;
  pathsHogQLExpression?: string | null;
  startPoint?: string | null;
  endPoint?: string | null;
  stepLimit?: number | null;
  pathGroupings?: string[] | null;
  excludeEvents?: string[] | null;
  localPathCleaningFilters?: PathCleaningFilter[] | null;
  pathReplacements?: boolean | null;
  edgeLimit?: number | null;
  minEdgeWeight?: number | null;
  maxEdgeWeight?: number | null;
}

export interface PathsQueryRequest extends Sampled {
  kind: 'PathsQuery';
  pathsFilter?: PathsFilter;
  dateRange?: { date_from?: string | null; date_to?: string | null };
  properties?: StoredPropertyFilter[];
  funnelPathsFilter?: unknown;
}

export interface PathsEdge {
  source: string;
  target: string;
  value: number;
  /** Milliseconds, as PostHog answers it. */
  average_conversion_time: number;
}

export const STEP_LIMIT_DEFAULT = 5;
export const EDGE_LIMIT_DEFAULT = 50;
/** PostHog's step picker stops at 20; each step is an edge per session. */
export const MAX_PATH_STEPS = 20;
export const MAX_PATH_EDGES = 1000;
/** PostHog's session threshold: a step this long after the one before starts a new path. */
export const SESSION_GAP_S = 30 * 60;

const KIND = 'PathsQuery';

/** The events a path is made of, by the types asked for; every event when none is. */
export function pathEventsCondition(filter: PathsFilter): Expr | null {
  const types = filter.includeEventTypes ?? [];
  const conditions: Expr[] = [];
  if (types.includes('$pageview')) conditions.push(compare('==', field('event'), constant('$pageview')));
  if (types.includes('$screen')) conditions.push(compare('==', field('event'), constant('$screen')));
  if (types.includes('custom_event')) conditions.push(call('not', call('startsWith', field('event'), constant('$'))));
  return conditions.length > 0 ? or(conditions) : null;
}

/** Whether pageviews (or screens) are read as their URL (screen name): asked for, or, when no type is, not excluded by name. */
function readsAs(filter: PathsFilter, type: '$pageview' | '$screen'): boolean {
  const types = filter.includeEventTypes ?? [];
  return types.length === 0 ? !(filter.excludeEvents ?? []).includes(type) : types.includes(type);
}

/** A step's name before cleaning: text, empty rather than null. */
async function stepNameExpr(filter: PathsFilter): Promise<Expr> {
  let name = field('event');
  const types = filter.includeEventTypes ?? [];
  if (filter.pathsHogQLExpression && (types.length === 0 || types.includes('hogql'))) {
    const expr = await parseExpr(filter.pathsHogQLExpression);
    if (containsAggregate(expr)) throw queryError(`${KIND}: pathsFilter.pathsHogQLExpression must be an expression of one event, not an aggregate`);
    name = call('toString', expr);
  }
  if (readsAs(filter, '$pageview')) {
    // The URL without one trailing slash, unless it is all there is.
    const url = call('replaceRegexpAll', call('ifNull', field('properties', '$current_url'), constant('')), constant('(.)/$'), constant('\\1'));
    name = call('if', compare('==', field('event'), constant('$pageview')), url, name);
  }
  if (readsAs(filter, '$screen')) name = call('if', compare('==', field('event'), constant('$screen')), field('properties', '$screen_name'), name);
  return call('ifNull', name, constant(''));
}

/** A grouping (`/product/*`) as the pattern it matches: its text, with `*` for anything. */
export function groupingPattern(grouping: string): string {
  return grouping.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&').replace(/\\\*/g, '.*');
}

/**
 * Each event of the range as `(actor, t, path_item)`: its person, its time in seconds, and its
 * step after the cleaning rules (in order) and the first grouping it matches; excluded steps left out.
 */
async function stepsQuery(filter: PathsFilter, period: Period, properties: readonly StoredPropertyFilter[], filters: FilterContext): Promise<SelectQuery> {
  let step = await stepNameExpr(filter);
  for (const rule of filter.localPathCleaningFilters ?? []) step = call('replaceRegexpAll', step, constant(rule.regex ?? ''), constant(rule.alias ?? ''));
  const groupings = filter.pathGroupings ?? [];
  const cleaned = field('path_item_cleaned');
  const grouped = groupings.length === 0 ? cleaned : call('multiIf', ...groupings.flatMap((g) => [call('match', cleaned, constant(groupingPattern(g))), constant(g)]), cleaned);
  const where: Expr[] = [compare('>=', field('timestamp'), at(period.from)), compare('<', field('timestamp'), at(period.to))];
  const events = pathEventsCondition(filter);
  if (events) where.push(events);
  const excluded = filter.excludeEvents ?? [];
  if (excluded.length > 0) where.push(compare('not in', field('path_item'), { node: 'Tuple', exprs: excluded.map(constant) }));
  where.push(...propertyConditions(properties, filters));
  return {
    node: 'SelectQuery',
    select: [alias('actor', field('person_id')), alias('t', call('toUnixTimestamp', field('timestamp'))), alias('path_item_cleaned', step), alias('path_item', grouped)],
    select_from: from('events'),
    where: and(where),
  };
}

const nth = (tuple: Expr, n: number): Expr => call('tupleElement', tuple, constant(n));
const element = (list: Expr, index: Expr): Expr => call('arrayElement', list, index);

/**
 * Each event as `(actor, session, step)`, `step` being `(t, path_item)`: a person's events in time
 * order (steps of one second by name, so the order is the same on every run), numbered by session,
 * a new one after a gap of SESSION_GAP_S or more. 18.16 has neither window functions nor
 * arraySplit: the gaps are counted with arrayCumSum over the sorted times.
 */
function sessionStepsQuery(steps: SelectQuery): SelectQuery {
  const perPerson: SelectQuery = {
    node: 'SelectQuery',
    select: [field('actor'), alias('trail', call('arraySort', call('groupArray', call('tuple', field('t'), field('path_item')))))],
    select_from: from(steps),
    group_by: [field('actor')],
  };
  const times = field('times');
  const previous = call('arrayConcat', call('arraySlice', times, constant(1), constant(1)), call('arraySlice', times, constant(1), minus(call('length', times), constant(1))));
  const gaps = call('arrayMap', lambda(['t', 'p'], call('if', compare('>=', minus(field('t'), field('p')), constant(SESSION_GAP_S)), constant(1), constant(0))), times, previous);
  return {
    node: 'SelectQuery',
    select: [
      field('actor'),
      alias('times', call('arrayMap', lambda(['s'], nth(field('s'), 1)), field('trail'))),
      alias('hit', call('arrayJoin', call('arrayMap', lambda(['s', 'n'], call('tuple', field('n'), field('s'))), field('trail'), call('arrayCumSum', gaps)))),
      alias('session', nth(field('hit'), 1)),
      alias('step', nth(field('hit'), 2)),
    ],
    select_from: from(perPerson),
  };
}

/** The arrays of the session's path (`path`) and the times of its steps (`timings`), cut and limited as PostHog's. */
function cutPath(filter: PathsFilter, limit: number): { select: Expr[]; where: Expr | null } {
  const path = field('compact_path');
  const times = field('compact_times');
  const start = targetOf(filter.startPoint);
  const end = targetOf(filter.endPoint);
  const slice = (list: Expr, offset: Expr, length?: Expr) => call('arraySlice', list, offset, ...(length ? [length] : []));
  const one = constant(1);
  if (start !== null && end !== null) {
    // From the start point to the first end point after it; a longer one keeps its ends around '...'.
    const half = Math.floor(limit / 2);
    const index = field('end_index');
    const middle = (list: Expr, gap: Expr) => call('if', compare('>', index, constant(limit)), call('arrayConcat', slice(list, one, constant(half)), gap, slice(list, minus(index, constant(half - 1)), constant(half))), list);
    const cut = (list: Expr) => slice(slice(list, field('start_index')), one, index);
    return {
      select: [
        alias('start_index', call('indexOf', path, constant(start))),
        alias('end_index', call('indexOf', slice(path, field('start_index')), constant(end))),
        alias('cut_path', cut(path)),
        alias('cut_times', cut(times)),
        alias('path', middle(field('cut_path'), array(constant('...')))),
        alias('timings', middle(field('cut_times'), array(element(field('cut_times'), constant(half + 1))))),
      ],
      where: and([compare('>', field('start_index'), constant(0)), compare('>', index, constant(0))]),
    };
  }
  if (start !== null) {
    const index = field('target_index');
    return {
      select: [alias('target_index', call('indexOf', path, constant(start))), alias('path', slice(slice(path, index), one, constant(limit))), alias('timings', slice(slice(times, index), one, constant(limit)))],
      where: compare('>', index, constant(0)),
    };
  }
  if (end !== null) {
    // Up to the first end point, its last `limit` steps.
    const index = field('target_index');
    const first = call('greatest', minus(index, constant(limit - 1)), one);
    return {
      select: [alias('target_index', call('indexOf', path, constant(end))), alias('path', slice(path, first, minus(plusOne(index), first))), alias('timings', slice(times, first, minus(plusOne(index), first)))],
      where: compare('>', index, constant(0)),
    };
  }
  return { select: [alias('path', slice(path, one, constant(limit))), alias('timings', slice(times, one, constant(limit)))], where: null };
}

const plusOne = (value: Expr): Expr => ({ node: 'ArithmeticOperation', op: '+', left: value, right: constant(1) });

/** A start or end point as steps are named: a URL's trailing slash dropped as pageviews' are. */
function targetOf(point: string | null | undefined): string | null {
  if (!point) return null;
  return point.length > 1 && point.endsWith('/') ? point.slice(0, -1) : point;
}

/** Each session's path: its steps grouped, repeats collapsed to the last, cut, limited. */
function sessionPathsQuery(sessionSteps: SelectQuery, filter: PathsFilter, limit: number): SelectQuery {
  const perSession: SelectQuery = {
    node: 'SelectQuery',
    select: [alias('visits', call('arraySort', call('groupArray', field('step'))))],
    select_from: from(sessionSteps),
    group_by: [field('actor'), field('session')],
  };
  const names = field('names');
  const next = call('arrayConcat', call('arraySlice', names, constant(2)), array(constant('')));
  const changes = (x: string) => lambda([x, 'p', 'n'], compare('!=', field('p'), field('n')));
  const cut = cutPath(filter, limit);
  return {
    node: 'SelectQuery',
    select: [
      alias('names', call('arrayMap', lambda(['v'], nth(field('v'), 2)), field('visits'))),
      alias('compact_path', call('arrayFilter', changes('x'), names, names, next)),
      alias('compact_times', call('arrayFilter', changes('x'), call('arrayMap', lambda(['v'], nth(field('v'), 1)), field('visits')), names, next)),
      ...cut.select,
    ],
    select_from: from(perSession),
    ...(cut.where && { where: cut.where }),
  };
}

/** The step limit, edge limit and weights, with PostHog's defaults. */
export function pathsLimits(filter: PathsFilter): { steps: number; edges: number } {
  return { steps: filter.stepLimit ?? STEP_LIMIT_DEFAULT, edges: filter.edgeLimit ?? EDGE_LIMIT_DEFAULT };
}

/** Rows `[source, target, value, average seconds]`, the heaviest edges first, then by name. */
export async function buildPathsQuery(request: PathsQueryRequest, period: Period, filters: FilterContext): Promise<SelectQuery> {
  const filter = request.pathsFilter ?? {};
  const { steps, edges } = pathsLimits(filter);
  const paths = sessionPathsQuery(sessionStepsQuery(await stepsQuery(filter, period, request.properties ?? [], filters)), filter, steps);
  const i = field('i');
  const before = minus(i, constant(1));
  const key = (n: Expr, list: Expr) => call('concat', call('toString', n), constant('_'), element(list, n));
  const pairs: SelectQuery = {
    node: 'SelectQuery',
    select: [
      alias('i', call('arrayJoin', call('arraySlice', call('arrayEnumerate', field('path')), constant(2)))),
      alias('source', key(before, field('path'))),
      alias('target', key(i, field('path'))),
      alias('gap', minus(element(field('timings'), i), element(field('timings'), before))),
    ],
    select_from: from(paths),
  };
  const weights: Expr[] = [];
  if (filter.minEdgeWeight) weights.push(compare('>=', field('value'), constant(filter.minEdgeWeight)));
  if (filter.maxEdgeWeight) weights.push(compare('<=', field('value'), constant(filter.maxEdgeWeight)));
  return {
    node: 'SelectQuery',
    select: [field('source'), field('target'), alias('value', call('count')), alias('average_gap', call('avg', field('gap')))],
    select_from: from(pairs),
    group_by: [field('source'), field('target')],
    ...(weights.length > 0 && { having: and(weights) }),
    order_by: [
      { node: 'OrderExpr', expr: field('value'), order: 'DESC' },
      { node: 'OrderExpr', expr: field('source'), order: 'ASC' },
      { node: 'OrderExpr', expr: field('target'), order: 'ASC' },
    ],
    limit: constant(edges),
  };
}

/**
 * The edges as PostHog answers them: only those reachable from a first step through the edges
 * kept (the edge limit may drop the edges leading to one), with times in milliseconds.
 */
export function shapePaths(rows: readonly unknown[][]): PathsEdge[] {
  const edges = rows.map(([source, target, value, average]) => ({ source: String(source), target: String(target), value: Number(value), average_conversion_time: Number(average) * 1000 }));
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.source, [...(next.get(e.source) ?? []), e.target]);
  const reached = new Set<string>();
  const stack = edges.filter((e) => e.source.startsWith('1_')).map((e) => e.source);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (reached.has(node)) continue;
    reached.add(node);
    stack.push(...(next.get(node) ?? []));
  }
  return edges.filter((e) => reached.has(e.source));
}

/** What the schema cannot say: the funnel paths are not built, and weights must make a range. */
export function validatePathsQuery(request: PathsQueryRequest): void {
  if (request.funnelPathsFilter !== undefined && request.funnelPathsFilter !== null) throw queryError(`${KIND}: funnelPathsFilter (paths before or after a funnel step) is not supported`);
  const filter = request.pathsFilter ?? {};
  if (filter.minEdgeWeight && filter.maxEdgeWeight && filter.minEdgeWeight > filter.maxEdgeWeight) throw queryError(`${KIND}: pathsFilter.minEdgeWeight must not be above maxEdgeWeight`);
  // A tenant's pattern runs in ClickHouse's RE2 (linear in its input): held to what RE2 runs as JavaScript reads it.
  (filter.localPathCleaningFilters ?? []).forEach((rule, i) => {
    const problem = rule.regex ? regexProblem(rule.regex) : 'is required';
    if (problem) throw queryError(`${KIND}: pathsFilter.localPathCleaningFilters[${i}].regex ${problem}`);
    const aliasProblem = replacementProblem(rule.alias ?? '', rule.regex!);
    if (aliasProblem) throw queryError(`${KIND}: pathsFilter.localPathCleaningFilters[${i}].alias ${aliasProblem}`);
  });
}

/**
 * ClickHouse reads `\1` in a replacement as the pattern's first group and fails the query on a
 * group the pattern lacks; any other backslash than `\\` reads differently on each side.
 */
function replacementProblem(alias: string, regex: string): string | null {
  const groups = new RegExp(`${regex}|`).exec('')!.length - 1;
  for (const [escape] of alias.matchAll(/\\[\s\S]?/g)) {
    if (escape === '\\\\') continue;
    const group = /^\\(\d)$/.exec(escape);
    if (!group) return 'may hold a backslash only as \\\\ or before a group number (\\1)';
    if (Number(group[1]) > groups) return `names group ${group[1]}, which the regex does not have`;
  }
  return null;
}

export async function runPathsQuery(request: PathsQueryRequest, deps: InsightRunDeps): Promise<InsightResponse<PathsEdge>> {
  const started = performance.now();
  validatePathsQuery(request);
  const timings: { k: string; t: number }[] = [];
  const run = timedRun(deps, timings);
  let earliest: Date | null = null;
  if (request.dateRange?.date_from === 'all') earliest = momentOf((await run(firstEventQuery([pathEventsCondition(request.pathsFilter ?? {})]))).data);
  const period = deps.calendar.resolveDateRange(request.dateRange, 'day', deps.now, earliest);
  const ast = await buildPathsQuery(request, period, deps.filters);
  const results = shapePaths(scaledRows((await run(ast)).data, 2, samplingFactorOf(request)));
  timings.push({ k: '.', t: seconds(started) });
  return { results, hogql: deps.hogql(ast), timings, is_cached: false, last_refresh: deps.now.toISOString() };
}
