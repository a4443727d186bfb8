import { MAX_LIMIT, queryError, type Expr, type FilterContext, type SelectQuery } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER, DEFAULT_BREAKDOWN_LIMIT, breakdownValueExpr, breakdownValuesQuery, type BreakdownFilter } from '../toolkit/breakdown.js';
import { alias, and, at, call, compare, constant, field, from, lambda, minus, or, plus } from '../toolkit/hogql-builders.js';
import type { InsightCalendar, Period } from '../toolkit/insight-calendar.js';
import { entityCondition, entityOf, seriesWhere } from '../toolkit/insight-series.js';
import { propertyConditions } from '../toolkit/property-conditions.js';
import { asNumber } from '../toolkit/result-values.js';

/**
 * PostHog's `FunnelsQuery` (steps view), aggregated by person. Every query is a HogQL tree printed
 * by the HogQL printer, so the tenant guard is the printer's alone.
 *
 * 18.16's `windowFunnel` takes no mode (no 'strict') and gives no step times, and 18.16 has no
 * `arrayFold` to replay PostHog's `aggregate_funnel` UDF event by event, so the funnel is computed
 * from each person's events as arrays, sorted by time, with the UDF's outcome:
 * - ordered: from every step-1 event, each next step is the person's first matching event after the
 *   previous step's, within the window of the start. The UDF restarts the path at every step-1
 *   event, so where several starts reach a step at the same event, its path is the latest start's
 *   (views at 00:00 and 23:59:59, then a sign-up: it converts from 23:59:59). The person's
 *   funnel is the first path to reach the furthest step, and its step times are the conversion times.
 * - strict: the same, but the events between two steps may only repeat the earlier step.
 * - unordered (not the UDF's): from every event of any step, the steps done within the window from
 *   it; the conversion times are between the reached steps' first times, in time order. The start
 *   reaching most steps counts, the earliest on a tie; an event matching two steps counts for both.
 * - exclusions (ordered and strict): an excluded event within the window while a path waits at a
 *   step of the exclusion's range (reached it, not yet the next) excludes that path, even when the
 *   next step never comes. An excluded path may still take that next step, no further; a person
 *   whose furthest path is excluded (and no clean path reaches as far) is dropped.
 * - breakdown: step-0 attribution: a person counts once per value of their first-step events, each
 *   time with the paths starting from events of that value only.
 * Times are whole seconds (the stored timestamps'); events of one second sort by the earliest step
 * they match, and are not given the UDF's treatment of one moment's different events (it ignores
 * exclusions among them, and strict funnels do not break on them).
 */
export type FunnelOrderType = 'ordered' | 'strict' | 'unordered';
export type FunnelWindowUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month';

export interface FunnelsEventsNode {
  /** An `EventsNode`, or an `ActionsNode` (one of the project's actions, by `id`), for steps and exclusions alike. */
  kind: 'EventsNode' | 'ActionsNode';
  event?: string | null;
  id?: number;
  name?: string;
  custom_name?: string;
  properties?: StoredPropertyFilter[];
}

export interface FunnelExclusion extends FunnelsEventsNode {
  funnelFromStep: number;
  funnelToStep: number;
}

export interface FunnelsQueryRequest {
  kind: 'FunnelsQuery';
  series: FunnelsEventsNode[];
  dateRange?: { date_from?: string | null; date_to?: string | null };
  properties?: StoredPropertyFilter[];
  breakdownFilter?: BreakdownFilter;
  funnelsFilter?: {
    funnelOrderType?: FunnelOrderType;
    funnelVizType?: 'steps' | 'trends' | 'time_to_convert';
    funnelWindowInterval?: number;
    funnelWindowIntervalUnit?: FunnelWindowUnit;
    exclusions?: FunnelExclusion[];
  };
  aggregation_group_type_index?: number | null;
}

export const MAX_FUNNEL_STEPS = 20;
/**
 * Bits for an event's step and exclusion flags in its sort key, below 32 of time and 5 of rank:
 * a funnel takes this many steps and exclusions together.
 */
const FLAG_BITS = 27;
export const DEFAULT_FUNNEL_WINDOW_DAYS = 14;

/** A month is 30 days: the window is a number of seconds, compared with the first step's time. */
const UNIT_SECONDS: Record<FunnelWindowUnit, number> = { second: 1, minute: 60, hour: 3_600, day: 86_400, week: 604_800, month: 2_592_000 };

export function funnelWindowSeconds(filter: FunnelsQueryRequest['funnelsFilter']): number {
  const interval = filter?.funnelWindowInterval ?? DEFAULT_FUNNEL_WINDOW_DAYS;
  const unit = filter?.funnelWindowIntervalUnit ?? 'day';
  if (!Object.hasOwn(UNIT_SECONDS, unit)) throw queryError(`funnelsFilter.funnelWindowIntervalUnit must be one of ${Object.keys(UNIT_SECONDS).join(', ')}`);
  if (!Number.isInteger(interval) || interval < 1 || interval > 100_000) throw queryError('funnelsFilter.funnelWindowInterval must be a whole number from 1');
  return interval * UNIT_SECONDS[unit];
}

export const orderTypeOf = (request: FunnelsQueryRequest): FunnelOrderType => request.funnelsFilter?.funnelOrderType ?? 'ordered';
export const hasFunnelBreakdown = (request: FunnelsQueryRequest): boolean => Boolean(request.breakdownFilter?.breakdown);

/** Refuses what this implementation does not compute, with PostHog's field names. */
export function validateFunnelsQuery(request: FunnelsQueryRequest): void {
  const steps = request.series ?? [];
  if (!Array.isArray(steps) || steps.length < 2) throw queryError('series: a funnel needs at least two steps');
  if (steps.length > MAX_FUNNEL_STEPS) throw queryError(`series: a funnel takes at most ${MAX_FUNNEL_STEPS} steps`);
  steps.forEach((step, i) => {
    if (step?.kind !== 'EventsNode' && step?.kind !== 'ActionsNode') throw queryError(`series[${i}]: only EventsNode and ActionsNode steps are supported yet`);
  });
  const viz = request.funnelsFilter?.funnelVizType ?? 'steps';
  if (viz !== 'steps') throw queryError(`funnelsFilter.funnelVizType ${String(viz)} is not supported yet; use steps`);
  const order = orderTypeOf(request);
  if (!['ordered', 'strict', 'unordered'].includes(order)) throw queryError('funnelsFilter.funnelOrderType must be ordered, strict or unordered');
  if (request.aggregation_group_type_index !== undefined && request.aggregation_group_type_index !== null) throw queryError('aggregation_group_type_index is not supported yet: funnels count persons');
  funnelWindowSeconds(request.funnelsFilter);
  const exclusions = request.funnelsFilter?.exclusions ?? [];
  if (steps.length + exclusions.length > FLAG_BITS) throw queryError(`funnelsFilter.exclusions: a funnel takes at most ${FLAG_BITS} steps and exclusions together`);
  if (exclusions.length && order === 'unordered') throw queryError('funnelsFilter.exclusions are not supported for unordered funnels');
  exclusions.forEach((e, i) => {
    const { funnelFromStep: from, funnelToStep: to } = e;
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to <= from || to >= steps.length) {
      throw queryError(`funnelsFilter.exclusions[${i}]: funnelFromStep and funnelToStep must be steps of the funnel, from before to`);
    }
  });
  if (request.breakdownFilter?.breakdown !== undefined && request.breakdownFilter.breakdown !== null && typeof request.breakdownFilter.breakdown !== 'string') {
    throw queryError('breakdownFilter.breakdown must name one property');
  }
}

// ---- Queries.

const num = (n: number): Expr => constant(n);
const ifElse = (cond: Expr, then: Expr, otherwise: Expr): Expr => call('if', cond, then, otherwise);

/** Whether an event is this step (or exclusion): its event name and its own property filters. */
function stepCondition(step: FunnelsEventsNode, filters: FilterContext): Expr {
  const conditions: Expr[] = [];
  const entity = entityCondition(step, filters);
  if (entity) conditions.push(entity);
  conditions.push(...propertyConditions(step.properties ?? [], filters));
  return conditions.length ? and(conditions) : constant(1);
}

export interface FunnelQueryInput {
  request: FunnelsQueryRequest;
  period: Period;
  filters: FilterContext;
  cal: InsightCalendar;
}

/** The top breakdown values by persons doing the first step, one more than the limit. */
export function buildFunnelBreakdownValuesQuery({ request, period, filters }: FunnelQueryInput): SelectQuery {
  return breakdownValuesQuery(request.breakdownFilter!, call('uniq', field('person_id')), seriesWhere(request.series[0]!, period.from, period.to, request.properties, filters));
}

/**
 * A path's rank as one Int64, ordered as the tuple (steps, clean, -last index, start index) would be
 * (argMax by a tuple is several times slower): a person's funnel events are fewer than 10^8.
 */
const rank = (steps: Expr, clean: Expr, lastIndex: Expr, start: Expr): Expr =>
  plus(minus(plus(call('multiply', steps, num(1e17)), call('multiply', clean, num(1e16))), call('multiply', lastIndex, num(1e8))), start);

const flagsOf = (k: number) => `flags_${k}`;
const countsOf = (k: number) => `counts_${k}`;
const exclusionFlagsOf = (e: number) => `exclusion_flags_${e}`;
const indexOf = (k: number) => `index_${k}`;
const timeOf = (k: number) => `time_${k}`;
const conversionOf = (k: number) => `conversion_time_${k}`;

/**
 * The whole funnel as one query: one row per breakdown value (one row when not broken down) with
 * `breakdown_value?`, then per step `count_k`, and from the second step `average_k`, `median_k` (seconds).
 */
export function buildFunnelQuery(input: FunnelQueryInput, breakdown?: { values: string[]; other: boolean }): SelectQuery {
  const { request, period, filters } = input;
  validateFunnelsQuery(request);
  const steps = request.series;
  const n = steps.length;
  const order = orderTypeOf(request);
  const exclusions = request.funnelsFilter?.exclusions ?? [];
  const window = funnelWindowSeconds(request.funnelsFilter);
  const broken = Boolean(breakdown);

  // 1. The events that matter, one row each: the person, and the event as one sort key (below).
  const stepConditions = steps.map((s) => stepCondition(s, filters));
  const exclusionConditions = exclusions.map((e) => stepCondition(e, filters));
  const flag = (cond: Expr) => ifElse(cond, num(1), num(0));
  // An event that is a step is not an exclusion (PostHog refuses exclusions that are steps anyway).
  const flags = [...stepConditions, ...exclusionConditions.map((c) => and([c, { node: 'Not', expr: or(stepConditions) }]))];
  // The key sorts as the tuple (time, rank, step flags, exclusion flags) would, and a sort of
  // numbers is several times faster than one of tuples. Events of one second sort by the earliest
  // step they are.
  const rankOf = call('multiIf', ...stepConditions.flatMap((c, k) => [c, num(k)]), num(n));
  const eventKey = flags.reduce<Expr>(
    (key, cond, j) => plus(key, call('multiply', flag(cond), num(2 ** (FLAG_BITS - 1 - j)))),
    plus(call('multiply', call('toUInt64', call('toUnixTimestamp', field('timestamp'))), num(2 ** 32)), call('multiply', rankOf, num(2 ** FLAG_BITS))),
  );
  const eventsSelect: Expr[] = [alias('aggregation_target', field('person_id')), alias('event_key', eventKey)];
  if (breakdown) {
    const value = breakdownValueExpr(request.breakdownFilter!);
    eventsSelect.push(alias('event_breakdown', breakdown.other ? ifElse(compare('in', value, { node: 'Tuple', exprs: breakdown.values.map(constant) }), value, constant(BREAKDOWN_OTHER)) : value));
  }
  const where: Expr[] = [compare('>=', field('timestamp'), at(period.from)), compare('<', field('timestamp'), at(period.to)), ...propertyConditions(request.properties ?? [], filters)];
  // Strict funnels see every event of the person: any other one between two steps breaks the funnel.
  if (order !== 'strict') where.push(or([...stepConditions, ...exclusionConditions]));
  const eventsQuery: SelectQuery = { node: 'SelectQuery', select: eventsSelect, select_from: from('events'), where: and(where) };

  // 2. Each person's events, sorted by time, as parallel arrays, and one row per event that can
  // start the funnel (the first step's, or any step's when unordered).
  const sorted = call('arraySort', call('groupArray', broken ? call('tuple', field('event_key'), field('event_breakdown')) : field('event_key')));
  const personQuery: SelectQuery = {
    node: 'SelectQuery',
    select: [field('aggregation_target'), alias('sorted_events', sorted)],
    select_from: from(eventsQuery),
    group_by: [field('aggregation_target')],
  };
  const keyOf = (e: Expr) => (broken ? call('tupleElement', e, num(1)) : e);
  const flagOf = (e: Expr, j: number) => call('modulo', call('intDiv', keyOf(e), num(2 ** (FLAG_BITS - 1 - j))), num(2));
  const each = (expr: (e: Expr) => Expr) => call('arrayMap', lambda(['e'], expr(field('e'))), field('sorted_events'));
  // Per step, how many of its events the person has up to each index: the first one after index p
  // is where the count first exceeds the count at p, a lookup rather than a scan per start.
  const counting = (k: number, counted: (e: Expr) => Expr) => alias(countsOf(k), call('arrayCumSum', each(counted)));
  const arraysSelect: Expr[] = [field('aggregation_target'), alias('times', each((e) => call('intDiv', keyOf(e), num(2 ** 32))))];
  if (order === 'strict') {
    // PostHog's strict funnel clears every step an event is not: the path waits through repeats of
    // step k - 1, and the first other event decides whether it takes step k.
    for (let k = 1; k < n; k++) {
      arraysSelect.push(alias(flagsOf(k), each((e) => flagOf(e, k))));
      arraysSelect.push(counting(k, (e) => ifElse(or([compare('==', flagOf(e, k), num(1)), compare('==', flagOf(e, k - 1), num(0))]), num(1), num(0))));
    }
  } else {
    for (let k = order === 'unordered' ? 0 : 1; k < n; k++) arraysSelect.push(counting(k, (e) => flagOf(e, k)));
  }
  arraysSelect.push(...exclusions.map((_, e) => alias(exclusionFlagsOf(e), each((x) => flagOf(x, n + e)))));
  if (broken) arraysSelect.push(alias('breakdowns', each((e) => call('tupleElement', e, num(2)))));
  const startSteps = order === 'unordered' ? steps.map((_, k) => k) : [0];
  const isStart = or(startSteps.map((k) => compare('==', flagOf(field('e'), k), num(1))));
  arraysSelect.push(alias('start_index', call('arrayJoin', call('arrayFilter', lambda(['i', 'e'], isStart), call('arrayEnumerate', field('sorted_events')), field('sorted_events')))));
  const startsQuery: SelectQuery = { node: 'SelectQuery', select: arraysSelect, select_from: from(personQuery) };

  // 3. Per start: the index of each step reached (0 when not), the steps reached, the conversion
  // times. ClickHouse expands every alias where it is used, so a value that names the one before it
  // (step k's index names step k - 1's) is computed in a select of its own and read as a column:
  // the statement then grows with the steps, not by a power of them.
  const layer = (inner: SelectQuery, items: Expr[]): SelectQuery => ({ node: 'SelectQuery', select: [field('*'), ...items], select_from: from(inner) });
  const startTime = call('arrayElement', field('times'), field('start_index'));
  const deadline = plus(startTime, num(window));
  const enumerate = call('arrayEnumerate', field('times'));
  // The index of the first event after `after` counted by step k's counts (0 when none), if within the window.
  const nextWithin = (k: number, after: Expr) => {
    const next = call('indexOf', field(countsOf(k)), plus(call('arrayElement', field(countsOf(k)), after), num(1)));
    // Index 0 has time 0, always within the window: no event stays no event.
    return ifElse(compare('<=', call('arrayElement', field('times'), next), deadline), next, num(0));
  };
  const first: Expr[] = broken ? [alias('breakdown_value', call('arrayElement', field('breakdowns'), field('start_index')))] : [];
  const time = (j: number) => call('arrayElement', field('times'), field(indexOf(j)));
  let chainQuery: SelectQuery;
  if (order === 'unordered') {
    const indexes = steps.flatMap((_, k) => [alias(indexOf(k), nextWithin(k, minus(field('start_index'), num(1))))]);
    const times = steps.map((_, k) => alias(timeOf(k), ifElse(compare('>', field(indexOf(k)), num(0)), time(k), num(0))));
    const reachedTimes = alias('reached_times', call('arraySort', call('arrayFilter', lambda(['t'], compare('>', field('t'), num(0))), { node: 'Array', exprs: steps.map((_, k) => field(timeOf(k))) })));
    const reached = layer(layer(layer(startsQuery, [...first, ...indexes]), times), [reachedTimes, alias('steps', call('length', field('reached_times')))]);
    const conversions: Expr[] = [];
    for (let k = 1; k < n; k++) {
      conversions.push(alias(conversionOf(k), ifElse(compare('>', field('steps'), num(k)), minus(call('arrayElement', field('reached_times'), num(k + 1)), call('arrayElement', field('reached_times'), num(k))), num(0))));
    }
    chainQuery = layer(reached, [...conversions, alias('excluded', num(0)), alias('funnel_steps', field('steps')), alias('funnel_key', rank(field('steps'), num(1), num(0), minus(num(0), field('start_index'))))]);
  } else {
    let indexed = layer(startsQuery, [...first, alias(indexOf(0), field('start_index'))]);
    for (let k = 1; k < n; k++) {
      const previous = field(indexOf(k - 1));
      let next = nextWithin(k, previous);
      // Strict: the deciding event must be step k itself, not another one breaking the path.
      if (order === 'strict') next = ifElse(compare('==', call('arrayElement', field(flagsOf(k)), next), num(1)), next, num(0));
      indexed = layer(indexed, [alias(indexOf(k), ifElse(compare('==', previous, num(0)), num(0), next))]);
    }
    const reached: Expr[] = [alias('steps', steps.slice(1).reduce<Expr>((sum, _, j) => plus(sum, ifElse(compare('>', field(indexOf(j + 1)), num(0)), num(1), num(0))), num(1)))];
    for (let k = 1; k < n; k++) reached.push(alias(conversionOf(k), ifElse(compare('>', field(indexOf(k)), num(0)), minus(time(k), time(k - 1)), num(0))));
    // An excluded event within the window while the path waits at step j excludes it; it may still
    // take step j + 1 (which can be the person's furthest), no further.
    const excludedAt: [number, Expr][] = [];
    for (let j = 0; j < n - 1; j++) {
      const covering = exclusions.flatMap((x, e) => (x.funnelFromStep <= j && j < x.funnelToStep ? [e] : []));
      if (!covering.length) continue;
      const waiting = and([
        or(covering.map((e) => compare('==', field(`x${e}`), num(1)))),
        compare('>', field('i'), field(indexOf(j))),
        or([compare('==', field(indexOf(j + 1)), num(0)), compare('<', field('i'), field(indexOf(j + 1)))]),
        compare('<=', field('t'), deadline),
      ]);
      const exists = call('arrayExists', lambda(['i', 't', ...covering.map((e) => `x${e}`)], waiting), enumerate, field('times'), ...covering.map((e) => field(exclusionFlagsOf(e))));
      excludedAt.push([j, and([compare('>', field(indexOf(j)), num(0)), exists])]);
    }
    // Each exclusion test is a column of its own, read by name by the two values that need it.
    reached.push(...excludedAt.map(([j, cond]) => alias(`excluded_at_${j}`, ifElse(cond, num(1), num(0)))));
    const excludedAtColumn = (j: number) => compare('==', field(`excluded_at_${j}`), num(1));
    const excluded = alias('excluded', excludedAt.length ? ifElse(or(excludedAt.map(([j]) => excludedAtColumn(j))), num(1), num(0)) : num(0));
    const cappedSteps = excludedAt.length ? call('multiIf', ...excludedAt.flatMap(([j]) => [excludedAtColumn(j), call('least', field('steps'), num(j + 2))]), field('steps')) : field('steps');
    const capped = layer(layer(indexed, reached), [excluded, alias('funnel_steps', cappedSteps)]);
    const lastIndex = alias('last_index', call('arrayElement', { node: 'Array', exprs: steps.map((_, k) => field(indexOf(k))) }, field('funnel_steps')));
    const withLast = layer(capped, [lastIndex]);
    // The person's funnel is the first path to reach the furthest step (a clean one before an
    // excluded one); of the starts reaching it at one event, the latest is PostHog's path.
    chainQuery = exclusions.length ? withLast : layer(withLast, [alias('funnel_key', rank(field('funnel_steps'), num(1), field('last_index'), field('start_index')))]);
  }

  // 4. Per person (and breakdown value of the start): the path the key ranks first. With exclusions,
  // the paths reaching a step at one event are first made one, the latest start's: the earlier ones
  // are paths PostHog's UDF already replaced, whose exclusions do not count.
  const conversionNames = steps.slice(1).map((_, j) => conversionOf(j + 1));
  const prefix = exclusions.length ? 'path_' : '';
  const latest = (name: string) => alias(`${prefix}${name}`, call('argMax', field(name), field('start_index')));
  const brokenBy = broken ? [field('breakdown_value')] : [];
  const paths: SelectQuery = exclusions.length
    ? {
        node: 'SelectQuery',
        select: [field('aggregation_target'), ...brokenBy, field('funnel_steps'), field('last_index'), latest('excluded'), ...conversionNames.map(latest)],
        select_from: from(chainQuery),
        group_by: [field('aggregation_target'), ...brokenBy, field('funnel_steps'), field('last_index')],
      }
    : chainQuery;
  const key = exclusions.length ? rank(field('funnel_steps'), minus(num(1), field('path_excluded')), field('last_index'), num(0)) : field('funnel_key');
  const best = (name: string) => call('argMax', field(`${prefix}${name}`), key);
  const personFunnel: SelectQuery = {
    node: 'SelectQuery',
    select: [
      field('aggregation_target'),
      ...brokenBy,
      alias('person_steps', call('max', field('funnel_steps'))),
      alias('person_excluded', best('excluded')),
      ...conversionNames.map((name) => alias(`person_${name}`, best(name))),
    ],
    select_from: from(paths),
    group_by: [field('aggregation_target'), ...brokenBy],
  };

  // 5. Per breakdown value: persons reaching each step, and the conversion times of those reaching
  // it, zero times left out as PostHog leaves them.
  const reached = (k: number) => compare('>=', field('person_steps'), num(k + 1));
  const timed = (k: number) => and([reached(k), compare('>', field(`person_${conversionOf(k)}`), num(0))]);
  const select: Expr[] = [...(broken ? [field('breakdown_value')] : [])];
  steps.forEach((_, k) => select.push(alias(`count_${k}`, call('countIf', reached(k)))));
  for (let k = 1; k < n; k++) {
    select.push(alias(`average_${k}`, call('avgIf', field(`person_${conversionOf(k)}`), timed(k))));
    select.push(alias(`median_${k}`, call('medianIf', field(`person_${conversionOf(k)}`), timed(k))));
  }
  const rows = broken ? breakdown!.values.length + 1 : 1;
  if (rows > MAX_LIMIT) throw queryError(`The funnel would have ${rows} breakdown values, more than ${MAX_LIMIT}: lower breakdown_limit`);
  return {
    node: 'SelectQuery',
    select,
    select_from: from(personFunnel),
    where: compare('==', field('person_excluded'), num(0)),
    ...(broken && { group_by: [field('breakdown_value')], order_by: [{ node: 'OrderExpr', expr: field('breakdown_value'), order: 'ASC' }] }),
    limit: num(rows),
  };
}

// ---- Results.

export interface FunnelStepResult {
  action_id: string | number | null;
  name: string;
  custom_name: string | null;
  order: number;
  people: never[];
  count: number;
  type: 'events' | 'actions';
  average_conversion_time: number | null;
  median_conversion_time: number | null;
  breakdown?: string[];
  breakdown_value?: string[];
}

/** A conversion time: NULL or NaN (an average over no person) is null, as PostHog gives it. */
const timeOrNull = (value: unknown): number | null => {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
};

/** One funnel's steps from one result row (`[breakdown_value?, count_0..count_n-1, average_1, median_1, ...]`). */
export function shapeFunnelRow(request: FunnelsQueryRequest, filters: FilterContext, row: readonly unknown[] | undefined, breakdownValue?: string): FunnelStepResult[] {
  const steps = request.series;
  const offset = breakdownValue === undefined ? 0 : 1;
  const n = steps.length;
  return steps.map((step, k) => {
    const count = row ? asNumber(row[offset + k]) : 0;
    const entity = entityOf(step, filters);
    const result: FunnelStepResult = {
      action_id: entity.id,
      name: entity.name,
      custom_name: step.custom_name ?? null,
      order: k,
      people: [],
      count,
      type: entity.type,
      average_conversion_time: k === 0 || !row || count === 0 ? null : timeOrNull(row[offset + n + 2 * (k - 1)]),
      median_conversion_time: k === 0 || !row || count === 0 ? null : timeOrNull(row[offset + n + 2 * (k - 1) + 1]),
    };
    if (breakdownValue !== undefined) {
      result.breakdown = [breakdownValue];
      result.breakdown_value = [breakdownValue];
    }
    return result;
  });
}

/** The funnel's results: one list of steps, or one per breakdown value, biggest first, the null value and "other" last. */
export function shapeFunnelResults(request: FunnelsQueryRequest, rows: readonly unknown[][], broken: boolean, filters: FilterContext): FunnelStepResult[] | FunnelStepResult[][] {
  if (!broken) return shapeFunnelRow(request, filters, rows[0]);
  const funnels = rows.map((row) => shapeFunnelRow(request, filters, row, String(row[0])));
  const rank = (f: FunnelStepResult[]) => (f[0]!.breakdown_value![0] === BREAKDOWN_OTHER ? 2 : f[0]!.breakdown_value![0] === BREAKDOWN_NULL ? 1 : 0);
  return funnels.filter((f) => f[0]!.count > 0).sort((a, b) => rank(a) - rank(b) || b[0]!.count - a[0]!.count || String(a[0]!.breakdown_value![0]).localeCompare(String(b[0]!.breakdown_value![0])));
}

export const funnelBreakdownLimit = (request: FunnelsQueryRequest): number => request.breakdownFilter?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT;
