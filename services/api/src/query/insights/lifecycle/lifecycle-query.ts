import { queryError, type Expr, type FilterContext, type SelectQuery } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { entityOf, intervalOf, seconds, seriesWhere, singleSeries, type InsightEventsNode, type SeriesEntity, type InsightResponse, type InsightRunDeps } from '../toolkit/insight-series.js';
import type { InsightCalendar, Period } from '../toolkit/insight-calendar.js';
import { alias, and, array, call, compare, constant, field, lambda } from '../toolkit/hogql-builders.js';
import { zeroFill } from '../toolkit/result-values.js';
import { samplingFactorOf, scaledRows, type Sampled } from '../toolkit/sampling.js';

/**
 * PostHog's `LifecycleQuery`: per interval, how many persons were new, returning, resurrecting, or
 * went dormant (negative). As PostHog's runner: a person is new in the interval of their first
 * event when it is also the interval their person was created in (the `created_at` of the
 * event's person, by its person id);
 * returning when also active the interval before; resurrecting otherwise; dormant the interval
 * after one they were active in, when not active again. Buckets are days, Monday weeks and months
 * of the project's timezone.
 */
export type LifecycleInterval = 'day' | 'week' | 'month';
export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

export interface LifecycleQueryRequest extends Sampled {
  kind: 'LifecycleQuery';
  series: InsightEventsNode[];
  interval?: LifecycleInterval;
  dateRange?: { date_from?: string | null; date_to?: string | null };
  properties?: StoredPropertyFilter[];
}

export interface LifecycleResult {
  action: { id: string | number | null; name: string; type: 'events' | 'actions'; order: 0; math: 'total' };
  data: number[];
  count: number;
  labels: string[];
  days: string[];
  label: string;
  status: LifecycleStatus;
}

const KIND = 'LifecycleQuery';

export function lifecyclePeriod(request: LifecycleQueryRequest, now: Date, cal: InsightCalendar): { period: Period; interval: LifecycleInterval } {
  const interval = intervalOf(request.interval, ['day', 'week', 'month'], 'day', KIND);
  if (request.dateRange?.date_from === 'all') throw queryError(`${KIND}: dateRange.date_from 'all' is not supported; give a date`);
  return { period: cal.resolveDateRange(request.dateRange, interval, now), interval };
}

const step = (value: Expr, interval: LifecycleInterval, n: number): Expr => call({ day: 'addDays', week: 'addWeeks', month: 'addMonths' }[interval], value, constant(n));

/**
 * Rows `[start_of_period, status, persons]`. Per person (18.16 has no window functions): the
 * sorted distinct intervals they were active in, from the interval before the range (so the
 * first interval's status is known) to the range's last; each active interval is paired with its
 * status, each interval after an active one not followed by activity with `dormant`; the pairs
 * are counted per interval and status.
 */
export function buildLifecycleQuery(series: InsightEventsNode, request: LifecycleQueryRequest, period: Period, interval: LifecycleInterval, filters: FilterContext, cal: InsightCalendar): SelectQuery {
  const first = period.buckets[0]!;
  const last = period.buckets.at(-1)!;
  const pairs: SelectQuery = {
    node: 'SelectQuery',
    select: [alias('pair', call('arrayJoin', field('pairs')))],
    select_from: { node: 'JoinExpr', table: lifecyclePairs(series, request, period, interval, filters, cal) },
  };
  return {
    node: 'SelectQuery',
    select: [alias('start_of_period', call('tupleElement', field('pair'), constant(1))), alias('status', call('tupleElement', field('pair'), constant(2))), alias('persons', call('count'))],
    select_from: { node: 'JoinExpr', table: pairs },
    group_by: [field('start_of_period'), field('status')],
    having: and([compare('>=', field('start_of_period'), cal.day(first)), compare('<=', field('start_of_period'), cal.day(last))]),
    order_by: [
      { node: 'OrderExpr', expr: field('start_of_period'), order: 'ASC' },
      { node: 'OrderExpr', expr: field('status'), order: 'ASC' },
    ],
    limit: constant(period.buckets.length * LIFECYCLE_STATUSES.length),
  };
}

/** The persons of one status in one interval (its bucket's start): those whose pairs the counts count hold it. */
export function buildLifecycleActorsQuery(series: InsightEventsNode, request: LifecycleQueryRequest, period: Period, interval: LifecycleInterval, filters: FilterContext, cal: InsightCalendar, bucket: Date, status: LifecycleStatus): SelectQuery {
  return {
    node: 'SelectQuery',
    select: [field('actor')],
    select_from: { node: 'JoinExpr', table: lifecyclePairs(series, request, period, interval, filters, cal) },
    where: call('has', field('pairs'), call('tuple', cal.day(bucket), constant(status))),
  };
}

/** Per person, `actor` and `pairs`: each interval of theirs (its start) with their status in it. */
function lifecyclePairs(series: InsightEventsNode, request: LifecycleQueryRequest, period: Period, interval: LifecycleInterval, filters: FilterContext, cal: InsightCalendar): SelectQuery {
  const first = period.buckets[0]!;
  const last = period.buckets.at(-1)!;
  const activity = field('activity');
  const activeIntervals: SelectQuery = {
    node: 'SelectQuery',
    select: [alias('actor', field('person_id')), alias('activity', call('arraySort', call('groupUniqArray', cal.bucketOf(field('timestamp'), interval))))],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: seriesWhere(series, cal.add(first, interval, -1), cal.add(last, interval, 1), request.properties, filters),
    group_by: [field('actor')],
  };
  // The person's creation is looked up once per person, after grouping, rather than joined onto
  // every event; a person no longer stored has none.
  const perPerson: SelectQuery = {
    node: 'SelectQuery',
    select: [alias('actor', field('a', 'actor')), alias('created', cal.bucketOf(field('p', 'created_at'), interval)), alias('activity', field('a', 'activity'))],
    select_from: {
      node: 'JoinExpr',
      table: activeIntervals,
      alias: 'a',
      next_join: { node: 'JoinExpr', table: { node: 'Field', chain: ['persons'] }, alias: 'p', join_type: 'LEFT JOIN', constraint: { node: 'JoinConstraint', expr: compare('==', field('a', 'actor'), field('p', 'id')), constraint_type: 'ON' } },
    },
  };
  // The interval before each active one: the creation interval before the first.
  const previous = call('arrayConcat', array(field('created')), call('arraySlice', activity, constant(1), call('minus', call('length', activity), constant(1))));
  // The interval after each active one: none after the last.
  const following = call('arrayConcat', call('arraySlice', activity, constant(2)), array(call('toDate', constant('1970-01-01'))));
  const statuses = call(
    'arrayMap',
    lambda(
      ['p', 'c', 'i'],
      call(
        'tuple',
        field('c'),
        call('multiIf', compare('==', field('p'), field('c')), constant('new'), and([compare('==', step(field('p'), interval, 1), field('c')), compare('!=', field('i'), constant(1))]), constant('returning'), constant('resurrecting')),
      ),
    ),
    previous,
    activity,
    call('arrayEnumerate', activity),
  );
  const dormant = call(
    'arrayMap',
    lambda(['c'], call('tuple', step(field('c'), interval, 1), constant('dormant'))),
    call('arrayFilter', lambda(['c', 'n'], compare('!=', step(field('c'), interval, 1), field('n'))), activity, following),
  );
  return {
    node: 'SelectQuery',
    select: [field('actor'), alias('pairs', call('arrayConcat', statuses, dormant))],
    select_from: { node: 'JoinExpr', table: perPerson },
  };
}

/** The four series PostHog answers, in its order, each zero-filled; dormant counts are negative. */
export function shapeLifecycle(rows: readonly unknown[][], entity: SeriesEntity, period: Period, interval: LifecycleInterval, cal: InsightCalendar): LifecycleResult[] {
  const { name } = entity;
  const days = period.buckets.map((b) => cal.formatDay(b, interval));
  const labels = period.buckets.map((b) => cal.formatLabel(b, interval));
  return LIFECYCLE_STATUSES.map((status) => {
    const sign = status === 'dormant' ? -1 : 1;
    const data = zeroFill(
      rows.filter((r) => r[1] === status).map((r) => ({ bucket: r[0], value: r[2] })),
      period.buckets,
      interval,
      cal,
    ).map((v) => (v === 0 ? 0 : sign * v));
    return {
      action: { id: entity.id, name, type: entity.type, order: 0, math: 'total' },
      data,
      count: data.reduce((a, b) => a + b, 0),
      labels,
      days,
      label: `${name} - ${status}`,
      status,
    };
  });
}

export async function runLifecycleQuery(request: LifecycleQueryRequest, deps: InsightRunDeps): Promise<InsightResponse<LifecycleResult>> {
  const started = performance.now();
  const series = singleSeries(request.series, KIND);
  const { period, interval } = lifecyclePeriod(request, deps.now, deps.calendar);
  const ast = buildLifecycleQuery(series, request, period, interval, deps.filters, deps.calendar);
  const { data } = await deps.run(ast);
  return { results: shapeLifecycle(scaledRows(data, 2, samplingFactorOf(request)), entityOf(series, deps.filters), period, interval, deps.calendar), hogql: deps.hogql(ast), timings: [{ k: '.', t: seconds(started) }], is_cached: false, last_refresh: deps.now.toISOString() };
}
