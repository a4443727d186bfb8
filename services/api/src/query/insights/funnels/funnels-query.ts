import { MAX_LIMIT, queryError, type Expr, type FilterContext, type SelectQuery } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER, DEFAULT_BREAKDOWN_LIMIT, breakdownValueExpr, breakdownValuesQuery, type BreakdownFilter } from '../toolkit/breakdown.js';
import { alias, and, at, call, compare, constant, field, from, lambda, minus, or, plus } from '../toolkit/hogql-builders.js';
import type { InsightCalendar, Period } from '../toolkit/insight-calendar.js';
import { entityCondition, entityOf, seriesWhere } from '../toolkit/insight-series.js';
import { propertyConditions } from '../toolkit/property-conditions.js';
import { asNumber } from '../toolkit/result-values.js';
import { samplingFactorOf, scaledCount, type Sampled } from '../toolkit/sampling.js';

/**
 * PostHog's `FunnelsQuery` (steps view), aggregated by person. Every query is a HogQL tree printed
 * by the HogQL printer, so the tenant guard is the printer's alone.
 *
 * 18.16's `windowFunnel` takes no mode (no 'strict') and gives no step times, and 18.16 has no
 * `arrayFold` to replay PostHog's `aggregate_funnel` UDF event by event, so the funnel is computed
 * from each person's events as arrays, sorted by time, with the UDF's outcome; in passes over the
 * arrays, a few per step (a few more per step an exclusion covers), so time, memory and the
 * statement grow with steps times events (`walkedPersonFunnel`, `unorderedPersonFunnel`); ordered
 * and strict walks skip the repeats of a step they cannot tell from the first (`collapseRuns`):
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
 *   next step never comes (the UDF's: the excluded event hits the path waiting there, and the
 *   person's furthest path if it waits within its window). An excluded path may still take that
 *   next step, no further; a person whose furthest path is excluded (and no clean path reaches as
 *   far) is dropped.
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

export interface FunnelsQueryRequest extends Sampled {
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
 * Bits for an event's step and exclusion flags in its sort key, below at most 31 of time and 5
 * of rank, so that a key fits a UInt64: a funnel takes this many steps and exclusions together.
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

const indexOf = (k: number) => `index_${k}`;
const conversionOf = (k: number) => `conversion_time_${k}`;
const stateOf = (k: number) => `state_${k}`;
const nextOf = (k: number) => `next_${k}`;
const lastMoveOf = (j: number) => `last_move_${j}`;
const reachedOf = (k: number) => `reached_${k}`;
const hitsOf = (j: number) => `hits_${j}`;
const excludedOf = (j: number) => `excluded_${j}`;
const nextHitOf = (j: number) => `next_hit_${j}`;
const countedOf = (k: number) => `counted_${k}`;
const arrivalsOf = (k: number) => `arrivals_${k}`;
const valuesOf = (k: number) => `values_${k}`;

/**
 * An event's key packs, from the top, its time (seconds after the moment before the period, from
 * 1), its rank (the earliest step it is, n for none) and its step and exclusion flags (step 0 the
 * highest), each in the fewest bits the funnel needs: where they fit 32 bits (a month's funnel of
 * a few steps), the keys are UInt32, which gather and sort faster than UInt64. Keys sort as the
 * tuple (time, rank, flags) would, and a sort of numbers is several times faster than one of tuples.
 */
interface EventKeys {
  /** The key from the event's time, rank and flags (each 0 or 1), in its flags' order. */
  key(time: Expr, rank: Expr, flags: Expr[]): Expr;
  /** Whether the key is flag j's: step j, or from n on, exclusion j - n. */
  isStep(e: Expr, j: number): Expr;
  timeOf(e: Expr): Expr;
  /** The bits below the time: two keys of one rank and flags differ by whole multiples of the rest. */
  lowMask: number;
}

const bitsFor = (largest: number): number => Math.max(1, Math.ceil(Math.log2(largest + 1)));

function eventKeys(n: number, flagCount: number, latestTime: number): EventKeys {
  const rankUnit = 2 ** flagCount;
  const timeUnit = rankUnit * 2 ** bitsFor(n);
  const narrow = timeUnit * 2 ** bitsFor(latestTime) <= 2 ** 32;
  const flagOf = (j: number): Expr => num(2 ** (flagCount - 1 - j));
  return {
    key: (time, rank, flags) => {
      const wide = flags.reduce<Expr>((key, flag, j) => plus(key, call('multiply', flag, flagOf(j))), plus(call('multiply', call('toUInt64', time), num(timeUnit)), call('multiply', rank, num(rankUnit))));
      return call(narrow ? 'toUInt32' : 'toUInt64', wide);
    },
    isStep: (e, j) => compare('!=', call('bitAnd', e, flagOf(j)), num(0)),
    timeOf: (e) => call('intDiv', e, num(timeUnit)),
    lowMask: timeUnit - 1,
  };
}

/**
 * A path's state is one Int64: its deadline (its start's time plus the window) times RANKS, plus
 * the rank from the end (`ranks`: the last event 1) of the event that reached the step. Of two
 * states the later start is the greater, and of one start the earlier arrival; an event is within
 * a path's window when its time is at most the deadline, which no path (0) has an event within.
 * RANKS events of one person are 8 GiB of keys at the least, far past what a query may hold.
 */
const RANKS = 2 ** 31;
/** Above any time and any rank (both below 2^31): what the walk counts down from to keep the latest (or next) as a maximum. */
const HIGH = 2 ** 32;
/** The latest deadline: states below 2^62, so that running maxima (and their differences, of excluded paths' negative values too) stay within an Int64. */
const MAX_FUNNEL_DEADLINE = 2 ** 31;
const deadlineOf = (path: Expr): Expr => call('intDiv', path, num(RANKS));
const arrivalRankOf = (path: Expr): Expr => call('modulo', path, num(RANKS));
/** A state negated (as the walk keeps a step's arrivals): `deadline`, reached at the event ranked `rank`. */
const negatedState = (deadline: Expr, rank: Expr): Expr => minus(call('multiply', deadline, num(-RANKS)), rank);
/** A reset's step in the running maximum, -2^63 (printed as a difference: a literal would pass through a double): below any sum it is added to. */
const RESET: Expr = minus(num(-(2 ** 62)), num(2 ** 62));
const ranks = field('ranks');

/**
 * The running maximum of the values `negated` holds negated (0 where none), back to 0 at each index
 * `resetAt` holds for (a lambda of the event key): max(m, v) = v + max(m - v, 0), and m - v follows
 * `arrayCumSumNonNegative` of the negations' differences. One pass each, where a lookup per index
 * (a lambda reading another array) would copy that array for every element; taking the values
 * negated saves the pass that would negate their differences.
 */
function runningMax(negated: Expr, resetAt?: (e: Expr) => Expr): Expr {
  const differences = call('arrayDifference', negated);
  const steps = resetAt ? call('arrayMap', lambda(['d', 'e'], ifElse(resetAt(field('e')), RESET, field('d'))), differences, field('keys')) : differences;
  return call('arrayMap', lambda(['w', 'g'], minus(field('g'), field('w'))), negated, call('arrayCumSumNonNegative', steps));
}

/** The select of the one before it with more columns: a column one names is read, not expanded again. */
const layer = (inner: SelectQuery, items: Expr[]): SelectQuery => ({ node: 'SelectQuery', select: [field('*'), ...items], select_from: from(inner) });

interface PersonFunnelInput {
  /** Per person (and breakdown value): `keys`, the sorted event keys, and `breakdowns` beside them when broken down. */
  persons: SelectQuery;
  n: number;
  window: number;
  /** How far after its start a path's window reaches: the window, or the period's length where shorter (which no event is past). */
  reach: number;
  strict: boolean;
  /** No event can be two steps (steps of different event names). */
  disjoint: boolean;
  broken: boolean;
  /** Ordered and strict funnels only. */
  exclusions: FunnelExclusion[];
  layout: EventKeys;
}

/**
 * Ordered and strict funnels as PostHog's UDF walks a person's events, in passes over arrays
 * rather than one walk per start (quadratic in a person's events) or an `arrayFold` (18.16 has
 * none). The UDF keeps, per step, the path waiting there; here, per step, an array of that state
 * after each event (`state_k`, a running maximum), and of the paths reaching the step at each
 * event, negated (`values_k`):
 * - step 0 is reached by its events (the breakdown value's only), each a new path;
 * - step k by its events that find a path at step k - 1 just before them, within that path's
 *   window: the path moves on, keeping its deadline; the maximum keeps the latest start, and of
 *   one start the first arrival (PostHog's UDF does not move a path twice);
 * - strict funnels: an event not of step k clears step k.
 * The person's funnel is the first path to reach the furthest step (the latest start reaching it
 * at that event): walked back from there, each step's index is where the state at the step
 * before, just before the next step's event, was reached.
 *
 * Exclusions, per step j an exclusion covers: an excluded event hits the path waiting at j if
 * within its window and no step j + 1 event came since the path's arrival (it would have moved
 * on); `excluded_j`, the running maximum of the paths hit, equals the state while the waiting path
 * is excluded. Such a path still takes step j + 1, kept positive (a negative value the state's
 * maximum passes over): counted as reached, it moves no further. Of the furthest step's arrivals
 * the first clean one counts: not an excluded one, nor one a later hit at that step within its
 * window excludes (`next_hit_j`, the time of the next hit); a person with none is left out.
 *
 * One select per step, its passes named within it (aliases of one select, so the statement grows
 * with the steps); each carries on the states' arrivals (for the walk back), the count of steps
 * reached and the index each reached step would count at.
 */
function walkedPersonFunnel({ persons, n, reach, strict, disjoint, broken, exclusions, layout }: PersonFunnelInput): SelectQuery {
  const { isStep, timeOf: timeAt } = layout;
  const withinPath = (e: Expr, path: Expr): Expr => compare('<=', timeAt(e), deadlineOf(path));
  const resetAt = (k: number) => (strict ? (e: Expr): Expr => ({ node: 'Not', expr: isStep(e, k) }) : undefined);
  const covering = (j: number) => exclusions.flatMap((x, e) => (x.funnelFromStep <= j && j < x.funnelToStep ? [n + e] : []));
  // Where an event of step k can be neither step k - 1's nor clear it, the state at step k - 1
  // after it is the one just before it (and an exclusion's, which no step event is, too).
  const inclusive = disjoint && !strict;
  // The state (or any running maximum) just before event i: the one at i less its difference from the one before.
  const before = (value: string, difference: string) => minus(field(value), field(difference));
  const waiting = before('s', 'd');
  // Only at the first event is that the event's own state, one it reached rather than waits on.
  const waits = and([compare('!=', arrivalRankOf(waiting), field('r')), withinPath(field('e'), waiting)]);
  const withState = (k: number) => [field('keys'), ranks, field(stateOf(k)), call('arrayDifference', field(stateOf(k)))];
  const withDifference = (name: string) => [field(name), call('arrayDifference', field(name))];
  const personColumns = ['aggregation_target', 'keys', ...(broken ? ['breakdowns', 'breakdown_index'] : [])];
  // What each step carries on: the breakdowns were read for step 0 alone.
  const base = ['aggregation_target', 'keys', ...(broken ? ['breakdown_index'] : []), 'ranks'];

  const reaching = (k: number): Expr => {
    if (k === 0) {
      const reaches = and([isStep(field('e'), 0), ...(broken ? [compare('==', field('b'), field('breakdown_index'))] : [])]);
      const each = lambda(['e', 'r', ...(broken ? ['b'] : [])], ifElse(reaches, negatedState(plus(timeAt(field('e')), num(reach)), field('r')), num(0)));
      return call('arrayMap', each, field('keys'), ranks, ...(broken ? [field('breakdowns')] : []));
    }
    const excluding = covering(k - 1).length > 0;
    const state = inclusive ? field('s') : waiting;
    const reaches = and([isStep(field('e'), k), inclusive ? withinPath(field('e'), state) : waits]);
    const value = negatedState(deadlineOf(state), field('r'));
    const stateArgs = inclusive ? { names: ['e', 'r', 's'], args: [field('keys'), ranks, field(stateOf(k - 1))] } : { names: ['e', 'r', 's', 'd'], args: withState(k - 1) };
    if (!excluding) return call('arrayMap', lambda(stateArgs.names, ifElse(reaches, value, num(0))), ...stateArgs.args);
    const excluded = inclusive ? field('x') : before('x', 'dx');
    const excludedArgs = inclusive ? { names: ['x'], args: [field(excludedOf(k - 1))] } : { names: ['x', 'dx'], args: withDifference(excludedOf(k - 1)) };
    const each = lambda([...stateArgs.names, ...excludedArgs.names], ifElse(reaches, ifElse(compare('==', excluded, state), minus(num(0), value), value), num(0)));
    return call('arrayMap', each, ...stateArgs.args, ...excludedArgs.args);
  };

  /** Which paths waiting at step j an excluded event hits, the state and the time of each step's next hit. */
  const exclusionPasses = (j: number): Expr[] => {
    // The latest step j + 1 event so far, as HIGH less its rank (later events rank lower), negated.
    const lastMove = call('arrayMap', lambda(['e', 'r'], ifElse(isStep(field('e'), j + 1), minus(field('r'), num(HIGH)), num(0))), field('keys'), ranks);
    const arrivedAfterMove = compare('<', before('m', 'dm'), minus(num(HIGH), arrivalRankOf(waiting)));
    const hitting = and([or(covering(j).map((x) => isStep(field('e'), x))), waits, arrivedAfterMove]);
    const hits = call('arrayMap', lambda(['e', 'r', 's', 'd', 'm', 'dm'], ifElse(hitting, minus(num(0), waiting), num(0))), ...withState(j), ...withDifference(lastMoveOf(j)));
    // Reversed, the next hit is the greatest of HIGH - its time (negated, as hits are).
    const reversed = call('arrayMap', lambda(['h', 'e'], ifElse(compare('<', field('h'), num(0)), minus(timeAt(field('e')), num(HIGH)), num(0))), call('arrayReverse', field(hitsOf(j))), call('arrayReverse', field('keys')));
    return [
      alias(lastMoveOf(j), runningMax(lastMove, resetAt(j + 1))),
      alias(hitsOf(j), hits),
      alias(excludedOf(j), runningMax(field(hitsOf(j)), resetAt(j))),
      alias(nextHitOf(j), call('arrayReverse', runningMax(reversed))),
    ];
  };

  // The first arrival at step j that counts were it the furthest: the first clean one, and where
  // an exclusion covers j, the first no later hit within its window excludes, of the arrivals that
  // become the state (not a path's later events of the step, which do not move it again).
  const counted = (j: number): Expr => {
    if (!covering(j).length) return call('arrayFirstIndex', lambda(['w'], compare('<', field('w'), num(0))), field(valuesOf(j)));
    const laterHit = and([compare('>', field('h'), num(0)), compare('<=', minus(num(HIGH), field('h')), deadlineOf(minus(num(0), field('w'))))]);
    const counts = and([compare('<', field('w'), num(0)), compare('==', plus(field('w'), field('s')), num(0)), { node: 'Not', expr: laterHit }]);
    return call('arrayFirstIndex', lambda(['w', 's', 'h'], counts), field(valuesOf(j)), field(stateOf(j)), field(nextHitOf(j)));
  };
  // Of step j's bookkeeping: how many steps are reached, and the index step j would count at.
  const tally = (j: number): Expr[] => {
    // Excluded paths (positive values) reach a step too; without exclusions here, the first counted arrival is the first.
    const excluding = covering(j).length || (j > 0 && covering(j - 1).length);
    const reaches = excluding ? call('arrayExists', lambda(['w'], compare('!=', field('w'), num(0))), field(valuesOf(j))) : compare('>', counted(j), num(0));
    const reached = ifElse(reaches, num(1), num(0));
    return [alias(reachedOf(j), j === 0 ? reached : plus(field(reachedOf(j - 1)), reached)), alias(countedOf(j), counted(j))];
  };

  const first = [...personColumns.map((name) => field(name)), alias('ranks', call('arrayReverse', call('arrayEnumerate', field('keys')))), alias(valuesOf(0), reaching(0))];
  let walked: SelectQuery = { node: 'SelectQuery', select: first, select_from: from(persons) };
  for (let k = 1; k < n; k++) {
    const j = k - 1;
    const carried = [...base, ...steps(j).map(arrivalsOf), ...(j > 0 ? [reachedOf(j - 1)] : []), ...steps(j).map(countedOf), valuesOf(j)];
    const items = [
      alias(stateOf(j), runningMax(field(valuesOf(j)), resetAt(j))),
      // The walk back reads the states' arrivals alone: carried on as those, in half the bytes.
      alias(arrivalsOf(j), call('arrayMap', lambda(['s'], call('toUInt32', arrivalRankOf(field('s')))), field(stateOf(j)))),
      ...(covering(j).length ? exclusionPasses(j) : []),
      ...tally(j),
      alias(valuesOf(k), reaching(k)),
    ];
    walked = { node: 'SelectQuery', select: [...carried.map((name) => field(name)), ...items], select_from: from(walked) };
  }

  // Each step's index on the person's path, from its furthest step down; above it, not read.
  const last = n - 1;
  const index = (k: number): Expr => {
    const arrivalBefore = (next: Expr) => call('arrayElement', field(arrivalsOf(k)), minus(call('greatest', next, num(1)), num(1)));
    const down = k === last ? num(0) : minus(plus(call('length', field('keys')), num(1)), arrivalBefore(field(indexOf(k + 1))));
    return alias(indexOf(k), ifElse(compare('==', field('person_steps'), num(k + 1)), field(countedOf(k)), down));
  };
  const time = (k: number) => timeAt(call('arrayElement', field('keys'), field(indexOf(k))));
  const countedAtFurthest = call('arrayElement', { node: 'Array', exprs: steps(n).map((k) => field(countedOf(k))) }, field('person_steps'));
  const excluded = exclusions.length ? ifElse(and([compare('>', field('person_steps'), num(0)), compare('==', countedAtFurthest, num(0))]), num(1), num(0)) : num(0);
  return {
    node: 'SelectQuery',
    select: [
      ...base.map((name) => field(name)),
      ...tally(last),
      alias('person_steps', field(reachedOf(last))),
      ...steps(n).map(index),
      alias('person_excluded', excluded),
      ...steps(n).slice(1).map((k) => alias(`person_${conversionOf(k)}`, ifElse(compare('>', field('person_steps'), num(k)), minus(time(k), time(k - 1)), num(0)))),
    ],
    select_from: from(walked),
  };
}

/**
 * Unordered funnels: from every event (of the breakdown value), the steps whose next event (at or
 * after it) is within the window; the start reaching most steps counts, the earliest on a tie, its
 * conversion times between the reached steps' times in time order. Each step's next event at
 * every index is a running maximum over the reversed events.
 */
function unorderedPersonFunnel({ persons, n, window, broken, layout }: PersonFunnelInput): SelectQuery {
  const { isStep, timeOf: timeAt } = layout;
  // Reversed, the nearest next event is the greatest of HIGH - its time (negated for the running maximum).
  const reversedValues = steps(n).map((k) =>
    alias(valuesOf(k), call('arrayMap', lambda(['e'], ifElse(isStep(field('e'), k), minus(timeAt(field('e')), num(HIGH)), num(0))), call('arrayReverse', field('keys')))),
  );
  const next = (k: number) => alias(nextOf(k), call('arrayReverse', call('arrayMap', lambda(['v'], ifElse(compare('>', field('v'), num(0)), minus(num(HIGH), field('v')), num(0))), runningMax(field(valuesOf(k))))));
  const withNext = layer(layer(persons, reversedValues), steps(n).map(next));
  const within = (t: Expr, e: Expr) => and([compare('>', t, num(0)), compare('<=', t, plus(timeAt(e), num(window)))]);
  const nextNames = steps(n).map((k) => `t${k}`);
  const count = steps(n).reduce<Expr>((sum, k) => plus(sum, ifElse(within(field(nextNames[k]!), field('e')), num(1), num(0))), num(0));
  const counted = broken ? ifElse(compare('==', field('b'), field('breakdown_index')), count, num(0)) : count;
  const counts = call('arrayMap', lambda(['e', ...(broken ? ['b'] : []), ...nextNames], counted), field('keys'), ...(broken ? [field('breakdowns')] : []), ...steps(n).map((k) => field(nextOf(k))));
  const withCounts = layer(withNext, [alias('step_counts', counts)]);
  const best = layer(withCounts, [alias('person_steps', call('arrayReduce', constant('max'), field('step_counts')))]);
  const startIndex = call('arrayFirstIndex', lambda(['c'], compare('==', field('c'), field('person_steps'))), field('step_counts'));
  const startKey = call('arrayElement', field('keys'), field('start_index'));
  const reachedTime = (k: number) => {
    const t = call('arrayElement', field(nextOf(k)), field('start_index'));
    return ifElse(within(t, startKey), t, num(0));
  };
  const started = layer(best, [alias('start_index', startIndex)]);
  const times = alias('reached_times', call('arraySort', call('arrayFilter', lambda(['t'], compare('>', field('t'), num(0))), { node: 'Array', exprs: steps(n).map(reachedTime) })));
  const timed = layer(started, [times]);
  const conversions = steps(n).slice(1).map((k) =>
    alias(`person_${conversionOf(k)}`, ifElse(compare('>', field('person_steps'), num(k)), minus(call('arrayElement', field('reached_times'), num(k + 1)), call('arrayElement', field('reached_times'), num(k))), num(0))),
  );
  return layer(timed, [alias('person_excluded', num(0)), ...conversions]);
}

const steps = (n: number): number[] => Array.from({ length: n }, (_, k) => k);

/**
 * A person's sorted events (keys, or (key, breakdown) tuples) without the repeats an ordered or
 * strict walk cannot tell from the first of their run: an event of the same flags as the one before
 * it that is one step's (not the first step's) or none. Every such event meets the same states as
 * the first of the run, later and within no more of a window: a step's path arrives at the first
 * (a later one of the same path moves nothing), an exclusion hits at the first (a later one hits
 * what is already excluded), a strict funnel's other event clears at the first. Events of the
 * first step, each a new start, and of several steps at once stay.
 */
function collapseRuns(sorted: Expr, n: number, broken: boolean, disjoint: boolean, { isStep, lowMask }: EventKeys): Expr {
  const keyOf = (x: Expr) => (broken ? call('tupleElement', x, num(1)) : x);
  const key = keyOf(field('x'));
  const notFirst = { node: 'Not', expr: isStep(key, 0) } as Expr;
  // Steps of different event names cannot share an event: there, not being the first step is enough.
  const stepCount = steps(n).reduce<Expr>((sum, k) => plus(sum, isStep(key, k)), num(0));
  const repeatable = disjoint ? notFirst : or([compare('==', stepCount, num(0)), and([compare('==', stepCount, num(1)), notFirst])]);
  // Keys ascend, and the flags (with the rank they decide) are their low bits: a later key of the
  // same flags differs by whole seconds. A difference of 0 is the first event (or the same key
  // twice), kept.
  const sameFlags = and([compare('!=', field('d'), num(0)), compare('==', call('bitAnd', field('d'), num(lowMask)), num(0))]);
  const differences = call('arrayDifference', broken ? call('arrayMap', lambda(['x'], key), sorted) : sorted);
  return call('arrayFilter', lambda(['x', 'd'], { node: 'Not', expr: and([sameFlags, repeatable]) }), sorted, differences);
}

/**
 * The whole funnel as one query: one row per breakdown value (one row when not broken down) with
 * `breakdown_value?`, then per step `count_k`, and from the second step `average_k`, `median_k` (seconds).
 */
export function buildFunnelQuery(input: FunnelQueryInput, breakdown?: { values: string[]; other: boolean }): SelectQuery {
  const n = input.request.series.length;
  const broken = Boolean(breakdown);
  // Per breakdown value: persons reaching each step, and the conversion times of those reaching
  // it, zero times left out as PostHog leaves them.
  const reached = (k: number) => compare('>=', field('person_steps'), num(k + 1));
  const timed = (k: number) => and([reached(k), compare('>', field(`person_${conversionOf(k)}`), num(0))]);
  const select: Expr[] = [...(broken ? [field('breakdown_value')] : [])];
  for (let k = 0; k < n; k++) select.push(alias(`count_${k}`, call('countIf', reached(k))));
  for (let k = 1; k < n; k++) {
    select.push(alias(`average_${k}`, call('avgIf', field(`person_${conversionOf(k)}`), timed(k))));
    select.push(alias(`median_${k}`, call('medianIf', field(`person_${conversionOf(k)}`), timed(k))));
  }
  const rows = broken ? breakdown!.values.length + 1 : 1;
  if (rows > MAX_LIMIT) throw queryError(`The funnel would have ${rows} breakdown values, more than ${MAX_LIMIT}: lower breakdown_limit`);
  return {
    node: 'SelectQuery',
    select,
    select_from: from(buildPersonFunnelQuery(input, breakdown)),
    where: compare('==', field('person_excluded'), num(0)),
    ...(broken && { group_by: [field('breakdown_value')], order_by: [{ node: 'OrderExpr', expr: field('breakdown_value'), order: 'ASC' }] }),
    limit: num(rows),
  };
}

/**
 * The persons behind a step, as the counts count them: `funnelStep` k > 0 those who reached step
 * k (1-based), k < 0 those who reached step |k| - 1 and not step |k|; of one breakdown value when
 * given (the funnel's own grouping, "other" included).
 */
export function buildFunnelActorsQuery(input: FunnelQueryInput, funnelStep: number, breakdown?: { value: string; top: { values: string[]; other: boolean } }): SelectQuery {
  const steps = field('person_steps');
  const step = funnelStep > 0 ? compare('>=', steps, num(funnelStep)) : compare('==', steps, num(-funnelStep - 1));
  const where = [compare('==', field('person_excluded'), num(0)), step];
  if (breakdown) where.push(compare('==', field('breakdown_value'), constant(breakdown.value)));
  return {
    node: 'SelectQuery',
    select: [alias('actor', field('aggregation_target'))],
    select_from: from(buildPersonFunnelQuery(input, breakdown?.top)),
    where: and(where),
    group_by: [field('actor')],
  };
}

/** One row per person (and breakdown value): `aggregation_target`, `breakdown_value?`, `person_steps`, `person_excluded`, and the conversion times. */
function buildPersonFunnelQuery(input: FunnelQueryInput, breakdown?: { values: string[]; other: boolean }): SelectQuery {
  const { request, period, filters } = input;
  validateFunnelsQuery(request);
  const steps = request.series;
  const n = steps.length;
  const order = orderTypeOf(request);
  const exclusions = request.funnelsFilter?.exclusions ?? [];
  const window = funnelWindowSeconds(request.funnelsFilter);
  const broken = Boolean(breakdown);
  // Event times count from the moment before the period, so each is at least 1; a deadline (a
  // start plus the reach) must stay below MAX_FUNNEL_DEADLINE for a state to fit an Int64.
  const origin = Math.floor(period.from.getTime() / 1000) - 1;
  const end = Math.ceil(period.to.getTime() / 1000) - origin;
  const reach = Math.min(window, end);
  if (end + reach >= MAX_FUNNEL_DEADLINE) throw queryError('dateRange: a funnel\'s period and its window (where shorter than the period) cover at most 68 years together');

  // 1. The events that matter, one row each: the person, and the event as one sort key (below).
  const stepConditions = steps.map((s) => stepCondition(s, filters));
  const exclusionConditions = exclusions.map((e) => stepCondition(e, filters));
  const flag = (cond: Expr) => ifElse(cond, num(1), num(0));
  // An event that is a step is not an exclusion (PostHog refuses exclusions that are steps anyway).
  const flags = [...stepConditions, ...exclusionConditions.map((c) => and([c, { node: 'Not', expr: or(stepConditions) }]))];
  // Events of one second sort by the earliest step they are.
  const rankOf = call('multiIf', ...stepConditions.flatMap((c, k) => [c, num(k)]), num(n));
  const layout = eventKeys(n, flags.length, end);
  const eventKey = layout.key(minus(call('toUnixTimestamp', field('timestamp')), num(origin)), rankOf, flags.map(flag));
  const eventsSelect: Expr[] = [alias('aggregation_target', field('person_id')), alias('event_key', eventKey)];
  const topValues: Expr = { node: 'Array', exprs: (breakdown?.values ?? []).map(constant) };
  if (breakdown) {
    const value = breakdownValueExpr(request.breakdownFilter!);
    // A value's place among the top ones (0: "other"), a number to sort and carry rather than its text.
    eventsSelect.push(alias('event_breakdown', call('toUInt32', call('indexOf', topValues, value))));
  }
  const where: Expr[] = [compare('>=', field('timestamp'), at(period.from)), compare('<', field('timestamp'), at(period.to)), ...propertyConditions(request.properties ?? [], filters)];
  // Strict funnels see every event of the person: any other one between two steps breaks the funnel.
  if (order !== 'strict') where.push(or([...stepConditions, ...exclusionConditions]));
  const eventsQuery: SelectQuery = { node: 'SelectQuery', select: eventsSelect, select_from: from('events'), where: and(where) };

  // 2. Each person's events sorted by time as arrays: `keys`, and `breakdowns` beside them; broken
  // down, one row per value of the events that can start the funnel (the first step's, or any
  // step's when unordered), each with the starts of that value only (step-0 attribution).
  const grouped = call('arraySort', call('groupArray', broken ? call('tuple', field('event_key'), field('event_breakdown')) : field('event_key')));
  const names = steps.map((s) => (s.kind === 'EventsNode' ? s.event : null));
  const disjoint = names.every((name) => typeof name === 'string') && new Set(names).size === n;
  const sorted = order === 'unordered' ? grouped : collapseRuns(grouped, n, broken, disjoint, layout);
  const personQuery: SelectQuery = {
    node: 'SelectQuery',
    select: [
      field('aggregation_target'),
      alias(broken ? 'all_keys' : 'keys', broken ? call('arrayMap', lambda(['e'], call('tupleElement', field('e'), num(1))), sorted) : sorted),
      ...(broken ? [alias('all_breakdowns', call('arrayMap', lambda(['e'], call('tupleElement', field('e'), num(2))), sorted))] : []),
    ],
    select_from: from(eventsQuery),
    group_by: [field('aggregation_target')],
  };
  const startSteps = order === 'unordered' ? steps.map((_, k) => k) : [0];
  const isStart = (e: Expr) => or(startSteps.map((k) => layout.isStep(e, k)));
  const byValue = layer(personQuery, [alias('breakdown_index', call('arrayJoin', call('arrayDistinct', call('arrayFilter', lambda(['b', 'e'], isStart(field('e'))), field('all_breakdowns'), field('all_keys')))))]);
  // A value's paths start at its starts: the person's events before the first of them are left out
  // of that value's arrays, which every step then carries shorter.
  const firstStart = call('arrayFirstIndex', lambda(['b', 'e'], and([compare('==', field('b'), field('breakdown_index')), isStart(field('e'))])), field('all_breakdowns'), field('all_keys'));
  const fromFirstStart = (name: string) => alias(name, call('arraySlice', field(`all_${name}`), firstStart));
  const persons: SelectQuery = broken
    ? { node: 'SelectQuery', select: [field('aggregation_target'), field('breakdown_index'), fromFirstStart('keys'), fromFirstStart('breakdowns')], select_from: from(byValue) }
    : personQuery;

  // 3. Per person (and breakdown value): the steps reached, whether excluded, the conversion times.
  const funnelInput = { persons, n, window, reach, strict: order === 'strict', disjoint, broken, exclusions, layout };
  const funnel = order === 'unordered' ? unorderedPersonFunnel(funnelInput) : walkedPersonFunnel(funnelInput);
  if (!breakdown) return funnel;
  const label = ifElse(compare('==', field('breakdown_index'), num(0)), constant(BREAKDOWN_OTHER), call('arrayElement', topValues, field('breakdown_index')));
  return layer(funnel, [alias('breakdown_value', label)]);
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
    const count = row ? scaledCount(asNumber(row[offset + k]), samplingFactorOf(request)) : 0;
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
