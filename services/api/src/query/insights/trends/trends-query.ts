import { MAX_LIMIT, queryError, type Expr, type FilterContext, type SelectQuery } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { BREAKDOWN_OTHER, DEFAULT_BREAKDOWN_LIMIT, breakdownGrouping, breakdownValueExpr, breakdownValuesQuery, type BreakdownFilter } from '../toolkit/breakdown.js';
import { alias, and, at, call, compare, constant, field, from, lambda } from '../toolkit/hogql-builders.js';
import type { InsightCalendar, Period, TrendsInterval } from '../toolkit/insight-calendar.js';
import { entityCondition } from '../toolkit/insight-series.js';
import { propertyConditions } from '../toolkit/property-conditions.js';
import { asNumber } from '../toolkit/result-values.js';
import type { Sampled } from '../toolkit/sampling.js';

export type { Period, TrendsInterval } from '../toolkit/insight-calendar.js';

/**
 * PostHog's `TrendsQuery`: one HogQL query per series (and per compared period), printed by the
 * HogQL printer like any other query, so the tenant guard and limits are the printer's alone.
 * Buckets are in the project's timezone (see insight-calendar.ts).
 */

export const TRENDS_MATHS = ['total', 'dau', 'weekly_active', 'monthly_active', 'unique_session', 'sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99', 'unique_group'] as const;
export type TrendsMath = (typeof TRENDS_MATHS)[number];
const PROPERTY_MATHS = new Set<TrendsMath>(['sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99']);

export interface TrendsEventsNode {
  /** An `EventsNode`, or an `ActionsNode` counting one of the project's actions (`id`). */
  kind: 'EventsNode' | 'ActionsNode';
  event?: string | null;
  id?: number;
  name?: string;
  custom_name?: string;
  math?: TrendsMath;
  math_property?: string;
  math_group_type_index?: number;
  properties?: StoredPropertyFilter[];
}

export interface TrendsQueryRequest extends Sampled {
  kind: 'TrendsQuery';
  series: TrendsEventsNode[];
  interval?: TrendsInterval;
  dateRange?: { date_from?: string | null; date_to?: string | null };
  properties?: StoredPropertyFilter[];
  breakdownFilter?: BreakdownFilter;
  compareFilter?: { compare?: boolean };
  trendsFilter?: { formula?: string; display?: string };
}
/** PostHog's displays that show one number per series over the whole range rather than a line of buckets. */
export const TOTAL_VALUE_DISPLAYS = new Set(['BoldNumber', 'ActionsPie', 'ActionsTable', 'ActionsBarValue', 'WorldMap']);
export const isTotalValue = (request: TrendsQueryRequest): boolean => TOTAL_VALUE_DISPLAYS.has(request.trendsFilter?.display ?? '');
// ---- Queries.

const ACTIVE_DAYS: Partial<Record<TrendsMath, number>> = { weekly_active: 7, monthly_active: 30 };
const QUANTILES: Partial<Record<TrendsMath, number>> = { p90: 0.9, p95: 0.95, p99: 0.99 };

function groupField(series: TrendsEventsNode): Expr {
  const index = series.math_group_type_index;
  if (index === undefined || index === null || !Number.isInteger(index) || index < 0 || index > 4) throw queryError('series: math unique_group needs math_group_type_index from 0 to 4');
  return field(`$group_${index}`);
}

/** The series' aggregate over the rows of one bucket (or of the whole range). */
export function mathExpr(series: TrendsEventsNode): Expr {
  const math = series.math ?? 'total';
  if (PROPERTY_MATHS.has(math)) {
    if (!series.math_property) throw queryError(`series: math ${math} needs a math_property`);
    const value = call('toFloat', field('properties', series.math_property));
    const quantile = QUANTILES[math];
    if (quantile !== undefined) return { node: 'Call', name: 'quantile', params: [constant(quantile)], args: [value] };
    return call(math, value);
  }
  // Unique counts are exact, as PostHog's count(DISTINCT): uniq keeps 32-bit hashes and samples past 65,536.
  switch (math) {
    case 'total':
      return call('count');
    case 'dau':
    case 'weekly_active':
    case 'monthly_active':
      return call('uniqExact', field('person_id'));
    case 'unique_session':
      return call('uniqExact', field('properties', '$session_id'));
    case 'unique_group':
      return call('uniqExact', groupField(series));
    default:
      throw queryError(`series: math ${String(math)} is not supported`);
  }
}

/**
 * The buckets a day keeps a user active in, for weekly/monthly active users: those whose last day
 * falls within the `days` days starting on it (an array; 18.16 has no range join).
 */
function activeBuckets(days: number, interval: TrendsInterval, day: Expr): Expr {
  const last = field('d');
  const covered = call('arrayMap', lambda(['i'], call('addDays', day, field('i'))), call('range', constant(days)));
  const isLastDay: Expr | null =
    interval === 'week' ? compare('==', call('toDayOfWeek', last), constant(7)) : interval === 'month' ? compare('!=', call('toStartOfMonth', call('addDays', last, constant(1))), call('toStartOfMonth', last)) : null;
  const lastDays = isLastDay ? call('arrayFilter', lambda(['d'], isLastDay), covered) : covered;
  return interval === 'day' ? lastDays : call('arrayMap', lambda(['d'], call(interval === 'week' ? 'toMonday' : 'toStartOfMonth', last)), lastDays);
}

/** The bucket an event counts toward: its own, or for active users each bucket it keeps them active in (a row for each, by arrayJoin). */
function bucketExpr(series: TrendsEventsNode, interval: TrendsInterval, cal: InsightCalendar): Expr {
  const activeDays = ACTIVE_DAYS[series.math ?? 'total'];
  return activeDays !== undefined ? call('arrayJoin', activeBuckets(activeDays, interval, cal.dateOf(field('timestamp')))) : cal.bucketOf(field('timestamp'), interval);
}

/** A row's breakdown value, past the top ones grouped as "other". */
function groupedBreakdown(request: TrendsQueryRequest, top: { values: string[]; other: boolean }): Expr {
  const value = breakdownValueExpr(request.breakdownFilter!);
  return top.other ? call('if', compare('in', value, { node: 'Tuple', exprs: top.values.map(constant) }), value, constant(BREAKDOWN_OTHER)) : value;
}

export const hasBreakdown = (request: TrendsQueryRequest): boolean => Boolean(request.breakdownFilter?.breakdown);

export interface SeriesQueryInput {
  request: TrendsQueryRequest;
  series: TrendsEventsNode;
  period: Period;
  interval: TrendsInterval;
  filters: FilterContext;
  cal: InsightCalendar;
}

function whereOf({ request, series, period, filters, cal }: SeriesQueryInput): Expr {
  const math = series.math ?? 'total';
  const activeDays = ACTIVE_DAYS[math];
  const total = isTotalValue(request);
  let from = period.from;
  // Active users of a bucket count the days before it too; over a whole range, the last days of it.
  if (activeDays !== undefined) from = total ? new Date(Math.max(period.from.getTime(), cal.add(period.to, 'day', -activeDays).getTime())) : cal.add(period.from, 'day', -(activeDays - 1));
  const where: Expr[] = [compare('>=', field('timestamp'), at(from)), compare('<', field('timestamp'), at(period.to))];
  const entity = entityCondition(series, filters);
  if (entity) where.unshift(entity);
  if (math === 'unique_group') where.push(call('notEmpty', groupField(series)));
  if (math === 'unique_session') where.push(call('notEmpty', call('ifNull', field('properties', '$session_id'), constant(''))));
  where.push(...propertyConditions([...(series.properties ?? []), ...(request.properties ?? [])], filters));
  return and(where);
}


/** The top breakdown values of a series over a period, by its aggregate. */
export const buildBreakdownValuesQuery = (input: SeriesQueryInput): SelectQuery => breakdownValuesQuery(input.request.breakdownFilter!, mathExpr(input.series), whereOf(input));

function checkPoints(points: number): void {
  if (points > MAX_LIMIT) throw queryError(`The chart would have ${points} points, more than ${MAX_LIMIT}: narrow the date range, lengthen the interval or lower breakdown_limit`);
}


/**
 * A series over a period: `bucket`, then `breakdown_value` when broken down, then `total`. The
 * total-value displays have no bucket. Breakdown values past the top ones are grouped as "other".
 */
export function buildSeriesQuery(input: SeriesQueryInput, breakdown?: { values: string[]; other: boolean }): SelectQuery {
  const { request, series, interval, cal } = input;
  const total = isTotalValue(request);
  const activeDays = ACTIVE_DAYS[series.math ?? 'total'];
  if (activeDays !== undefined && !total) return activeUsersQuery(input, activeDays, breakdown);
  const select: Expr[] = [];
  const groupBy: Expr[] = [];
  if (!total) {
    select.push(alias('bucket', bucketExpr(series, interval, cal)));
    groupBy.push(field('bucket'));
  }
  if (breakdown) {
    select.push(alias('breakdown_value', groupedBreakdown(request, breakdown)));
    groupBy.push(field('breakdown_value'));
  }
  select.push(alias('total', mathExpr(series)));
  return seriesSelect(input, from('events'), select, groupBy, whereOf(input), breakdown);
}

/** The series query's grouping, order and limit over `source`: every bucket and breakdown value fits in one answer, or the query is refused rather than cut short. */
function seriesSelect(input: SeriesQueryInput, source: SelectQuery['select_from'], select: Expr[], groupBy: Expr[], where: Expr | null, breakdown: { values: string[] } | undefined, having?: Expr): SelectQuery {
  const rows = (isTotalValue(input.request) ? 1 : input.period.buckets.length) * (breakdown ? breakdown.values.length + 1 : 1);
  checkPoints(rows);
  return {
    node: 'SelectQuery',
    select,
    select_from: source,
    ...(where && { where }),
    ...(groupBy.length && { group_by: groupBy, order_by: groupBy.map((expr) => ({ node: 'OrderExpr' as const, expr, order: 'ASC' as const })) }),
    ...(having && { having }),
    limit: constant(rows),
  };
}

/**
 * Weekly or monthly active users per bucket, counted once per person: each person's days with an
 * event (and breakdown value) gathered first, then the buckets those days keep them active in,
 * each once. Repeating every event into each of its `days` buckets read `days` times the events
 * into a unique count per bucket.
 */
function activeUsersQuery(input: SeriesQueryInput, activeDays: number, breakdown: { values: string[]; other: boolean } | undefined): SelectQuery {
  const { request, series, interval, cal } = input;
  if (interval === 'hour') throw queryError(`series: math ${series.math} needs an interval of day, week or month`);
  const byValue = breakdown ? [alias('breakdown_value', groupedBreakdown(request, breakdown))] : [];
  const valueColumn = breakdown ? [field('breakdown_value')] : [];
  const days = call('groupUniqArray', cal.dateOf(field('timestamp')));
  const buckets = call('arrayReduce', constant('groupUniqArrayArray'), call('arrayMap', lambda(['day'], activeBuckets(activeDays, interval, field('day'))), days));
  const perPerson: SelectQuery = {
    node: 'SelectQuery',
    select: [alias('actor', field('person_id')), ...byValue, alias('buckets', buckets)],
    select_from: from('events'),
    where: whereOf(input),
    group_by: [field('actor'), ...valueColumn],
  };
  // Days before the range count toward its first buckets only; the buckets they reach before it are dropped.
  const inRange = and([compare('>=', field('bucket'), cal.day(input.period.buckets[0]!)), compare('<', field('bucket'), cal.day(input.period.to))]);
  return seriesSelect(
    input,
    from(perPerson),
    [alias('bucket', call('arrayJoin', field('buckets'))), ...valueColumn, alias('total', call('count'))],
    [field('bucket'), ...valueColumn],
    null,
    breakdown,
    inRange,
  );
}

/** One point of a series: its bucket's local day (none over the whole range), and its breakdown value among the top ones. */
export interface SeriesPoint {
  day: string | null;
  breakdown?: { value: string; top: { values: string[]; other: boolean } };
}

/**
 * The persons behind one point of a series, with how many of its events each did there: the
 * series query's own rows (its filters, buckets and breakdown grouping), grouped by person.
 */
export function buildSeriesActorsQuery(input: SeriesQueryInput, point: SeriesPoint): SelectQuery {
  const { request, series, interval, cal } = input;
  const select: Expr[] = [alias('actor', field('person_id')), alias('event_count', call('count'))];
  const groupBy: Expr[] = [field('actor')];
  const having: Expr[] = [];
  if (point.day !== null) {
    select.push(alias('bucket', bucketExpr(series, interval, cal)));
    groupBy.push(field('bucket'));
    having.push(compare('==', call('toString', field('bucket')), constant(point.day)));
  }
  if (point.breakdown) {
    const { value, top } = point.breakdown;
    select.push(alias('breakdown_value', groupedBreakdown(request, top)));
    groupBy.push(field('breakdown_value'));
    having.push(compare('==', field('breakdown_value'), constant(value)));
  }
  return {
    node: 'SelectQuery',
    select,
    select_from: from('events'),
    where: whereOf(input),
    group_by: groupBy,
    ...(having.length && { having: and(having) }),
  };
}

/**
 * A count can be broken down in one scan: "other" is every value's count less the top values'.
 * A unique count cannot (a person may be in several values), nor a sum of floats exactly.
 */
export const countsInOnePass = (series: TrendsEventsNode): boolean => (series.math ?? 'total') === 'total';

/**
 * A count broken down in one statement: per value, `is_value` 1, the value, its total, and its
 * buckets with their counts as two arrays, the top values first (one more than the limit, to tell
 * whether an "other" is needed); before them one row with `is_value` 0 holding every value's.
 */
export function buildBreakdownCountQuery(input: SeriesQueryInput): SelectQuery {
  const { request, interval, cal } = input;
  const totalValue = isTotalValue(request);
  const limit = request.breakdownFilter!.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT;
  const bucket = totalValue ? [] : [alias('bucket', cal.bucketOf(field('timestamp'), interval))];
  const byBucket = totalValue ? [] : [field('bucket')];
  const grouping = breakdownGrouping(request.breakdownFilter!);
  const counts: SelectQuery = {
    node: 'SelectQuery',
    select: [...bucket, alias('breakdown_key', grouping.key), alias('n', call('count'))],
    select_from: from('events'),
    where: whereOf(input),
    group_by: [...byBucket, field('breakdown_key')],
  };
  // Each value's row, and again as part of the all-values row, summed per bucket.
  const doubled: SelectQuery = {
    node: 'SelectQuery',
    select: [
      alias('is_value', call('arrayJoin', { node: 'Array', exprs: [constant(1), constant(0)] })),
      alias('value', call('if', compare('==', field('is_value'), constant(1)), grouping.valueOf(field('breakdown_key')), constant(''))),
      ...byBucket,
      alias('n', call('sum', field('n'))),
    ],
    select_from: from(counts),
    group_by: [field('is_value'), field('value'), ...byBucket],
  };
  return {
    node: 'SelectQuery',
    select: [
      field('is_value'),
      field('value'),
      alias('total', call('sum', field('n'))),
      alias('buckets', call('groupArray', totalValue ? constant(0) : field('bucket'))),
      alias('counts', call('groupArray', field('n'))),
    ],
    select_from: from(doubled),
    group_by: [field('is_value'), field('value')],
    order_by: [
      { node: 'OrderExpr', expr: field('is_value'), order: 'ASC' },
      { node: 'OrderExpr', expr: field('total'), order: 'DESC' },
      { node: 'OrderExpr', expr: field('value'), order: 'ASC' },
    ],
    limit: constant(limit + 2),
  };
}

/** The one-statement count's rows as the series query's (`[bucket?, breakdown_value, total]`), with the values found, "other" last. */
export function breakdownCountRows(rows: readonly unknown[][], limit: number, input: SeriesQueryInput): { rows: unknown[][]; values: string[]; other: boolean } {
  const totalValue = isTotalValue(input.request);
  const cells = (row: unknown[] | undefined) => {
    const [buckets, counts] = [(row?.[3] ?? []) as unknown[], (row?.[4] ?? []) as unknown[]];
    return buckets.map((bucket, i): [string, number] => [String(bucket), asNumber(counts[i])]);
  };
  const all = rows.find((row) => Number(row[0]) === 0);
  const valueRows = rows.filter((row) => Number(row[0]) === 1);
  const top = valueRows.slice(0, limit);
  const other = valueRows.length > limit;
  checkPoints((totalValue ? 1 : input.period.buckets.length) * (top.length + 1));
  const out: unknown[][] = [];
  const rest = new Map(cells(all));
  for (const row of top) {
    for (const [bucket, n] of cells(row)) {
      out.push(totalValue ? [row[1], n] : [bucket, row[1], n]);
      rest.set(bucket, (rest.get(bucket) ?? 0) - n);
    }
  }
  if (other) for (const [bucket, n] of rest) if (n > 0) out.push(totalValue ? [BREAKDOWN_OTHER, n] : [bucket, BREAKDOWN_OTHER, n]);
  return { rows: out, values: [...top.map((row) => String(row[1])), ...(other ? [BREAKDOWN_OTHER] : [])], other };
}

