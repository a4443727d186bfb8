import { queryError, type SelectQuery } from '@tributary/hogql';
import { BREAKDOWN_OTHER, DEFAULT_BREAKDOWN_LIMIT, topBreakdownValues } from '../toolkit/breakdown.js';
import type { InsightCalendar, Period, TrendsInterval } from '../toolkit/insight-calendar.js';
import { entityCondition, singleSeries, type InsightRunDeps } from '../toolkit/insight-series.js';
import { firstEventQuery, momentOf } from '../toolkit/first-event.js';
import { buildBreakdownValuesQuery, buildSeriesActorsQuery, buildSeriesQuery, hasBreakdown, isTotalValue, type SeriesQueryInput, type TrendsQueryRequest } from '../trends/trends-query.js';
import { stickinessPerPerson, stickinessPeriod, type StickinessQueryRequest } from '../stickiness/stickiness-query.js';
import { LIFECYCLE_STATUSES, buildLifecycleActorsQuery, lifecyclePeriod, type LifecycleQueryRequest, type LifecycleStatus } from '../lifecycle/lifecycle-query.js';
import { buildRetentionActorsQuery, retentionPlan, type RetentionQueryRequest } from '../retention/retention-query.js';
import { buildFunnelActorsQuery, buildFunnelBreakdownValuesQuery, funnelBreakdownLimit, hasFunnelBreakdown, validateFunnelsQuery, type FunnelsQueryRequest } from '../funnels/funnels-query.js';

/**
 * PostHog's actors sources: the persons behind one point of an insight, each built from the
 * insight's own per-person query, so that the persons of a point are by construction those its
 * number counted.
 */
export interface InsightActorsQuery {
  kind: 'InsightActorsQuery';
  source: TrendsQueryRequest | StickinessQueryRequest | LifecycleQueryRequest | RetentionQueryRequest;
  /** Trends and lifecycle: the bucket (its local date); stickiness: the number of intervals. */
  day?: string | number | null;
  /** Lifecycle: new, returning, resurrecting or dormant. */
  status?: string | null;
  /** Retention: the cohort (0 the first). */
  interval?: number | null;
  /** Trends: the series (0 the first). */
  series?: number | null;
  /** Trends: the breakdown value, as the insight labels it. */
  breakdown?: string | number | (string | number)[] | null;
  /** Trends compared with the previous period: which period's point. */
  compare?: 'current' | 'previous' | null;
  includeRecordings?: boolean | null;
}

export interface FunnelsActorsQuery {
  kind: 'FunnelsActorsQuery';
  source: FunnelsQueryRequest;
  /** Positive: converted at that step (1-based); negative: dropped off before that step. */
  funnelStep?: number | null;
  funnelStepBreakdown?: string | number | (string | number)[] | null;
  includeRecordings?: boolean | null;
}

export type ActorsSource = InsightActorsQuery | FunnelsActorsQuery;

/**
 * The point's persons as `actor`; where the insight counts events, with `event_count`; for a
 * retention cohort, with `returned`, the intervals they came back in (from 1), of `intervals`.
 */
export interface ActorSet {
  query: SelectQuery;
  columns: ReadonlySet<'event_count' | 'returned'>;
  intervals?: number;
}

const single = (value: InsightActorsQuery['breakdown']): string | null => {
  if (value === null || value === undefined) return null;
  const first = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  if (first === undefined) throw queryError('breakdown: give one breakdown value');
  return String(first);
};

/** A breakdown value the insight shows: one of its top values, or "other" when it has one. */
function pickBreakdown(value: string, top: { values: string[]; other: boolean }, attr: string): { value: string; top: { values: string[]; other: boolean } } {
  if (top.values.includes(value) || (value === BREAKDOWN_OTHER && top.other)) return { value, top };
  throw queryError(`${attr}: ${JSON.stringify(value)} is not one of the insight's breakdown values`);
}

/** The bucket `day` names, refused unless it is one the insight shows. */
function bucketOf(day: unknown, period: Period, interval: TrendsInterval, cal: InsightCalendar, now: Date): Date {
  if (typeof day !== 'string') throw queryError('day: give the date of the point, as the insight labels it (e.g. 2024-01-31)');
  const bucket = cal.bucketStart(cal.parseDate(day, now, 'day').date, interval);
  if (!period.buckets.some((b) => b.getTime() === bucket.getTime())) throw queryError(`day: ${day} is not in the insight's date range`);
  return bucket;
}

async function trendsActors(actors: InsightActorsQuery, request: TrendsQueryRequest, deps: InsightRunDeps): Promise<ActorSet> {
  const cal = deps.calendar;
  if (request.trendsFilter?.formula?.trim()) throw queryError('source: a formula\'s line has no persons of its own; ask for one of its series');
  const index = actors.series ?? 0;
  const series = request.series[index];
  if (!Number.isInteger(index) || !series) throw queryError(`series: ${index} is not a series of the insight (0 to ${request.series.length - 1})`);
  if (series.math === 'unique_group') throw queryError('series: a unique_group series counts groups; its persons are not supported yet');
  const interval = request.interval ?? 'day';
  let earliest: Date | null = null;
  if (request.dateRange?.date_from === 'all') earliest = momentOf((await deps.run(firstEventQuery(request.series.map((s) => entityCondition(s, deps.filters))))).data);
  let period = cal.resolveDateRange(request.dateRange, interval, deps.now, earliest);
  if (actors.compare === 'previous') {
    if (!request.compareFilter?.compare) throw queryError('compare: previous needs an insight compared with the previous period');
    period = cal.previousPeriod(period, interval);
  }
  const input: SeriesQueryInput = { request, series, period, interval, filters: deps.filters, cal };
  const day = isTotalValue(request) ? null : cal.formatDay(bucketOf(actors.day, period, interval, cal, deps.now), interval);
  const value = single(actors.breakdown);
  if (!hasBreakdown(request)) {
    if (value !== null) throw queryError('breakdown: the insight is not broken down');
    // Built for its refusals alone (an interval the math does not take, too many points): the point must be one the insight can draw.
    buildSeriesQuery(input);
    return { query: buildSeriesActorsQuery(input, { day }), columns: new Set(['event_count']) };
  }
  if (value === null) throw queryError('breakdown: the insight is broken down; give the breakdown value of the point');
  const top = topBreakdownValues((await deps.run(buildBreakdownValuesQuery(input))).data, request.breakdownFilter!.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT);
  const breakdown = pickBreakdown(value, top, 'breakdown');
  buildSeriesQuery(input, top);
  return { query: buildSeriesActorsQuery(input, { day, breakdown }), columns: new Set(['event_count']) };
}

function stickinessActors(actors: InsightActorsQuery, request: StickinessQueryRequest, deps: InsightRunDeps): ActorSet {
  const { period, interval } = stickinessPeriod(request, deps.now, deps.calendar);
  const index = actors.series ?? 0;
  const series = request.series?.[index];
  if (!Number.isInteger(index) || !series) throw queryError(`series: ${index} is not a series of the insight`);
  const day = actors.day;
  if (typeof day !== 'number' || !Number.isInteger(day) || day < 1 || day > period.buckets.length) throw queryError(`day: give the number of ${interval}s of the point, from 1 to ${period.buckets.length}`);
  const perPerson = stickinessPerPerson(series, request, period, interval, deps.filters, deps.calendar);
  const query: SelectQuery = {
    node: 'SelectQuery',
    select: [{ node: 'Field', chain: ['actor'] }, { node: 'Field', chain: ['event_count'] }],
    select_from: { node: 'JoinExpr', table: perPerson },
    where: { node: 'CompareOperation', op: '==', left: { node: 'Field', chain: ['num_intervals'] }, right: { node: 'Constant', value: day } },
  };
  return { query, columns: new Set(['event_count']) };
}

function lifecycleActors(actors: InsightActorsQuery, request: LifecycleQueryRequest, deps: InsightRunDeps): ActorSet {
  const series = singleSeries(request.series, 'LifecycleQuery');
  const { period, interval } = lifecyclePeriod(request, deps.now, deps.calendar);
  const status = actors.status;
  if (!LIFECYCLE_STATUSES.includes(status as LifecycleStatus)) throw queryError(`status: give one of ${LIFECYCLE_STATUSES.join(', ')}`);
  const bucket = bucketOf(actors.day, period, interval, deps.calendar, deps.now);
  return { query: buildLifecycleActorsQuery(series, request, period, interval, deps.filters, deps.calendar, bucket, status as LifecycleStatus), columns: new Set() };
}

function retentionActors(actors: InsightActorsQuery, request: RetentionQueryRequest, deps: InsightRunDeps): ActorSet {
  const plan = retentionPlan(request, deps.now, deps.calendar);
  const cohort = actors.interval;
  if (typeof cohort !== 'number' || !Number.isInteger(cohort) || cohort < 0 || cohort >= plan.total) throw queryError(`interval: give the cohort of the point, from 0 to ${plan.total - 1}`);
  return { query: buildRetentionActorsQuery(plan, request, deps.filters, deps.calendar, cohort), columns: new Set(['returned']), intervals: plan.total - cohort };
}

async function funnelActors(actors: FunnelsActorsQuery, request: FunnelsQueryRequest, deps: InsightRunDeps): Promise<ActorSet> {
  validateFunnelsQuery(request);
  const n = request.series.length;
  const step = actors.funnelStep;
  if (typeof step !== 'number' || !Number.isInteger(step) || step === 0 || step > n || step < -n || step === -1) {
    throw queryError(`funnelStep: give a step from 1 to ${n} (converted) or from -2 to -${n} (dropped off before it)`);
  }
  const cal = deps.calendar;
  let earliest: Date | null = null;
  if (request.dateRange?.date_from === 'all') earliest = momentOf((await deps.run(firstEventQuery([entityCondition(request.series[0]!, deps.filters)]))).data);
  const input = { request, period: cal.resolveDateRange(request.dateRange, 'day', deps.now, earliest), filters: deps.filters, cal };
  const value = single(actors.funnelStepBreakdown);
  if (!hasFunnelBreakdown(request)) {
    if (value !== null) throw queryError('funnelStepBreakdown: the funnel is not broken down');
    return { query: buildFunnelActorsQuery(input, step), columns: new Set() };
  }
  if (value === null) return { query: buildFunnelActorsQuery(input, step), columns: new Set() };
  const top = topBreakdownValues((await deps.run(buildFunnelBreakdownValuesQuery(input))).data, funnelBreakdownLimit(request));
  return { query: buildFunnelActorsQuery(input, step, pickBreakdown(value, top, 'funnelStepBreakdown')), columns: new Set() };
}

/** The persons behind the point a source names; a point the insight does not show is a 400 naming the field. */
export async function actorsOf(source: ActorsSource, deps: InsightRunDeps): Promise<ActorSet> {
  if (source.kind === 'FunnelsActorsQuery') {
    if (source.source?.kind !== 'FunnelsQuery') throw queryError('source.source: a FunnelsActorsQuery takes a FunnelsQuery');
    return funnelActors(source, source.source, deps);
  }
  const insight = source.source;
  switch (insight?.kind) {
    case 'TrendsQuery':
      return trendsActors(source, insight, deps);
    case 'StickinessQuery':
      return stickinessActors(source, insight, deps);
    case 'LifecycleQuery':
      return lifecycleActors(source, insight, deps);
    case 'RetentionQuery':
      return retentionActors(source, insight, deps);
    default:
      throw queryError(`source.source: ${JSON.stringify((insight as { kind?: unknown } | undefined)?.kind ?? null)} has no actors here; use TrendsQuery, StickinessQuery, LifecycleQuery or RetentionQuery (funnels: FunnelsActorsQuery)`);
  }
}
