import { queryError, type FilterContext, type SelectQuery } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { entityOf, intervalOf, seconds, seriesWhere, type InsightEventsNode, type SeriesEntity, type InsightResponse, type InsightRunDeps } from '../toolkit/insight-series.js';
import type { InsightCalendar, Period, TrendsInterval } from '../toolkit/insight-calendar.js';
import { alias, call, constant, field } from '../toolkit/hogql-builders.js';
import { asNumber } from '../toolkit/result-values.js';
import { samplingFactorOf, scaledRows, type Sampled } from '../toolkit/sampling.js';

/**
 * PostHog's `StickinessQuery`: per series, how many persons did the event on exactly 1, 2, ... N
 * intervals of the range (N its number of intervals). Buckets are in the project's timezone, as the trends'.
 */
export interface StickinessQueryRequest extends Sampled {
  kind: 'StickinessQuery';
  series: InsightEventsNode[];
  interval?: TrendsInterval;
  dateRange?: { date_from?: string | null; date_to?: string | null };
  properties?: StoredPropertyFilter[];
}

export interface StickinessResult {
  action: { order: number; type: 'events' | 'actions'; name: string; id: string | number | null };
  label: string;
  count: number;
  data: number[];
  labels: string[];
  days: number[];
}

const KIND = 'StickinessQuery';

/** The range and its intervals; `date_from: 'all'` is not supported (it would need the first event first). */
export function stickinessPeriod(request: StickinessQueryRequest, now: Date, cal: InsightCalendar): { period: Period; interval: TrendsInterval } {
  const interval = intervalOf(request.interval, ['hour', 'day', 'week', 'month'], 'day', KIND);
  if (request.dateRange?.date_from === 'all') throw queryError(`${KIND}: dateRange.date_from 'all' is not supported; give a date`);
  return { period: cal.resolveDateRange(request.dateRange, interval, now), interval };
}

/** Per person: `actor`, the count of distinct intervals of the range they were active in, and their events. */
export function stickinessPerPerson(series: InsightEventsNode, request: StickinessQueryRequest, period: Period, interval: TrendsInterval, filters: FilterContext, cal: InsightCalendar): SelectQuery {
  return {
    node: 'SelectQuery',
    select: [alias('actor', field('person_id')), alias('num_intervals', call('uniqExact', cal.bucketOf(field('timestamp'), interval))), alias('event_count', call('count'))],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: seriesWhere(series, period.from, period.to, request.properties, filters),
    group_by: [field('actor')],
  };
}

/**
 * Rows `[num_intervals, persons]`: each person's count of distinct active intervals in the range,
 * then how many persons have each count.
 */
export function buildStickinessQuery(series: InsightEventsNode, request: StickinessQueryRequest, period: Period, interval: TrendsInterval, filters: FilterContext, cal: InsightCalendar): SelectQuery {
  return {
    node: 'SelectQuery',
    select: [field('num_intervals'), alias('persons', call('count'))],
    select_from: { node: 'JoinExpr', table: stickinessPerPerson(series, request, period, interval, filters, cal) },
    group_by: [field('num_intervals')],
    order_by: [{ node: 'OrderExpr', expr: field('num_intervals'), order: 'ASC' }],
    limit: constant(period.buckets.length),
  };
}

const plural = (n: number, interval: TrendsInterval) => `${n} ${interval}${n === 1 ? '' : 's'}`;

/** One series' rows as PostHog's result: `data[i]` persons active on exactly i+1 intervals, for i+1 from 1 to N. */
export function shapeStickiness(rows: readonly unknown[][], entity: SeriesEntity, order: number, intervals: number, interval: TrendsInterval): StickinessResult {
  const byCount = new Map(rows.map((r) => [asNumber(r[0]), asNumber(r[1])]));
  const days = Array.from({ length: intervals }, (_, i) => i + 1);
  const data = days.map((d) => byCount.get(d) ?? 0);
  const { name } = entity;
  return {
    action: { order, type: entity.type, name, id: entity.id },
    label: name,
    count: data.reduce((a, b) => a + b, 0),
    data,
    labels: days.map((d) => plural(d, interval)),
    days,
  };
}

export async function runStickinessQuery(request: StickinessQueryRequest, deps: InsightRunDeps): Promise<InsightResponse<StickinessResult>> {
  const started = performance.now();
  if (!Array.isArray(request.series) || request.series.length === 0) throw queryError(`${KIND}: series must hold at least one EventsNode or ActionsNode`);
  const { period, interval } = stickinessPeriod(request, deps.now, deps.calendar);
  const results: StickinessResult[] = [];
  let hogql = '';
  for (const [order, series] of request.series.entries()) {
    const ast = buildStickinessQuery(series, request, period, interval, deps.filters, deps.calendar);
    if (order === 0) hogql = deps.hogql(ast);
    const { data } = await deps.run(ast);
    results.push(shapeStickiness(scaledRows(data, 1, samplingFactorOf(request)), entityOf(series, deps.filters), order, period.buckets.length, interval));
  }
  return { results, hogql, timings: [{ k: '.', t: seconds(started) }], is_cached: false, last_refresh: deps.now.toISOString() };
}
