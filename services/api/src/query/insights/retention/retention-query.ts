import { queryError, type Expr, type FilterContext, type SelectQuery } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { entityCondition, seconds, type InsightEventsNode, type InsightResponse, type InsightRunDeps } from '../toolkit/insight-series.js';
import type { InsightCalendar, TrendsInterval } from '../toolkit/insight-calendar.js';
import { alias, and, at, call, compare, constant, field, lambda } from '../toolkit/hogql-builders.js';
import { propertyConditions } from '../toolkit/property-conditions.js';
import { asNumber } from '../toolkit/result-values.js';
import { samplingFactorOf, scaledRows, type Sampled } from '../toolkit/sampling.js';

/**
 * PostHog's `RetentionQuery`, by person: one cohort per interval (the last `totalIntervals` ones
 * up to `date_to`), of the persons who did the target event in it (`retention_recurring`) or did
 * it for the first time ever in it (`retention_first_time`); then, for each later interval, how
 * many of them did the returning event in it. Interval 0 is the cohort's size. Intervals are in
 * the project's timezone.
 */
export type RetentionPeriod = 'Day' | 'Week' | 'Month';
export interface RetentionEntity {
  /** The event's name, or the action's id (`type: 'actions'`). */
  id?: string | number | null;
  /** An EventsNode's name for the same thing. */
  event?: string | null;
  type?: 'events' | 'actions';
  kind?: 'EventsNode' | 'ActionsNode';
  name?: string;
}

export interface RetentionQueryRequest extends Sampled {
  kind: 'RetentionQuery';
  retentionFilter: {
    targetEntity?: RetentionEntity;
    returningEntity?: RetentionEntity;
    retentionType?: 'retention_first_time' | 'retention_recurring';
    totalIntervals?: number;
    period?: RetentionPeriod;
  };
  dateRange?: { date_from?: string | null; date_to?: string | null };
  properties?: StoredPropertyFilter[];
}

export interface RetentionResult {
  date: string;
  label: string;
  values: { count: number; label: string }[];
}

const KIND = 'RetentionQuery';
const PERIODS: Record<RetentionPeriod, Exclude<TrendsInterval, 'hour'>> = { Day: 'day', Week: 'week', Month: 'month' };
export const DEFAULT_TOTAL_INTERVALS = 8;
const MAX_TOTAL_INTERVALS = 100;

export interface RetentionPlan {
  period: RetentionPeriod;
  interval: Exclude<TrendsInterval, 'hour'>;
  total: number;
  /** The first cohort's interval start, and the end of the last one. */
  start: Date;
  end: Date;
  target: InsightEventsNode;
  returning: InsightEventsNode;
  firstTime: boolean;
}

/** An entity as a series: PostHog's `{type: 'actions', id}` (or an ActionsNode) is an action, anything else an event by name. */
const entitySeries = (entity: RetentionEntity | undefined, attr: string): InsightEventsNode => {
  if (!entity) return { event: '$pageview' };
  if (entity.type === 'actions' || entity.kind === 'ActionsNode') {
    const id = Number(entity.id);
    if (!Number.isInteger(id) || id < 1 || id > 2_147_483_647) throw queryError(`${KIND}: retentionFilter.${attr}.id must be the id of one of the project's actions`);
    return { kind: 'ActionsNode', id };
  }
  const event = entity.id ?? entity.event ?? null;
  if (event !== null && typeof event !== 'string') throw queryError(`${KIND}: retentionFilter.${attr}.id must be an event name`);
  if (entity.type !== undefined && entity.type !== 'events') throw queryError(`${KIND}: retentionFilter.${attr} must be of type events or actions`);
  return { event };
};

export function retentionPlan(request: RetentionQueryRequest, now: Date, cal: InsightCalendar): RetentionPlan {
  const filter = request.retentionFilter ?? {};
  const period = filter.period ?? 'Day';
  const interval = PERIODS[period];
  if (!interval) throw queryError(`${KIND}: retentionFilter.period must be one of ${Object.keys(PERIODS).join(', ')}`);
  const total = filter.totalIntervals ?? DEFAULT_TOTAL_INTERVALS;
  if (!Number.isInteger(total) || total < 1 || total > MAX_TOTAL_INTERVALS) throw queryError(`${KIND}: retentionFilter.totalIntervals must be a whole number from 1 to ${MAX_TOTAL_INTERVALS}`);
  const type = filter.retentionType ?? 'retention_recurring';
  if (type !== 'retention_recurring' && type !== 'retention_first_time') throw queryError(`${KIND}: retentionFilter.retentionType must be retention_recurring or retention_first_time`);
  const to = request.dateRange?.date_to ? cal.parseDate(request.dateRange.date_to, now, 'dateRange.date_to').date : now;
  const last = cal.bucketStart(to, interval);
  return {
    period,
    interval,
    total,
    start: cal.add(last, interval, -(total - 1)),
    end: cal.add(last, interval, 1),
    target: entitySeries(filter.targetEntity, 'targetEntity'),
    returning: entitySeries(filter.returningEntity, 'returningEntity'),
    firstTime: type === 'retention_first_time',
  };
}

const TRUE: Expr = { node: 'Constant', value: true };
const tsAfterStart = (plan: RetentionPlan) => compare('>=', field('timestamp'), at(plan.start));

/** The interval a moment falls in, counted from the first cohort's (negative before it). */
function intervalIndex(value: Expr, plan: RetentionPlan, cal: InsightCalendar): Expr {
  const start = cal.day(plan.start);
  if (plan.interval === 'day') return call('dateDiff', constant('day'), start, cal.dateOf(value));
  if (plan.interval === 'week') return call('intDiv', call('dateDiff', constant('day'), start, cal.bucketOf(value, 'week')), constant(7));
  const { year, month } = cal.yearMonth(plan.start);
  const local = cal.bucketOf(value, 'month');
  return call('minus', call('plus', call('multiply', call('toYear', local), constant(12)), call('toMonth', local)), constant(year * 12 + month));
}

const inRange = (index: Expr, plan: RetentionPlan): Expr => and([compare('>=', index, constant(0)), compare('<', index, constant(plan.total))]);

/**
 * Rows `[cohort, interval, persons]`. Per person (18.16: no window functions): the cohorts they
 * start and the intervals they returned in; each start is paired with every later interval
 * (two arrayJoins multiply), and persons counted where they returned, or at interval 0.
 */
export function buildRetentionQuery(plan: RetentionPlan, request: RetentionQueryRequest, filters: FilterContext, cal: InsightCalendar): SelectQuery {
  const pairs: SelectQuery = {
    node: 'SelectQuery',
    select: [
      alias('cohort', call('arrayJoin', field('starts'))),
      alias('offset', call('arrayJoin', call('range', constant(plan.total)))),
      alias('returned', call('has', field('returns'), call('plus', field('cohort'), field('offset')))),
    ],
    select_from: { node: 'JoinExpr', table: retentionPerPerson(plan, request, filters, cal) },
  };
  return {
    node: 'SelectQuery',
    select: [field('cohort'), field('offset'), alias('persons', call('countIf', { node: 'Or', exprs: [compare('==', field('offset'), constant(0)), field('returned')] }))],
    select_from: { node: 'JoinExpr', table: pairs },
    where: compare('<', call('plus', field('cohort'), field('offset')), constant(plan.total)),
    group_by: [field('cohort'), field('offset')],
    order_by: [
      { node: 'OrderExpr', expr: field('cohort'), order: 'ASC' },
      { node: 'OrderExpr', expr: field('offset'), order: 'ASC' },
    ],
    limit: constant(plan.total * plan.total),
  };
}

/**
 * The persons of one cohort, each with `returned`: the intervals after the cohort's they returned
 * in, counted from it, as the cells count them (a lambda reading `returns` would be read before
 * 18.16 knows the column: it prunes what only lambdas read).
 */
export function buildRetentionActorsQuery(plan: RetentionPlan, request: RetentionQueryRequest, filters: FilterContext, cal: InsightCalendar, cohort: number): SelectQuery {
  return {
    node: 'SelectQuery',
    select: [field('actor'), alias('returned', call('arrayMap', lambda(['i'], call('minus', field('i'), constant(cohort))), field('returns')))],
    select_from: { node: 'JoinExpr', table: retentionPerPerson(plan, request, filters, cal) },
    where: call('has', field('starts'), constant(cohort)),
  };
}

/** Per person: `actor`, the cohorts they start (`starts`) and the intervals they returned in (`returns`). */
function retentionPerPerson(plan: RetentionPlan, request: RetentionQueryRequest, filters: FilterContext, cal: InsightCalendar): SelectQuery {
  const isEvent = (entity: InsightEventsNode): Expr => entityCondition(entity, filters) ?? TRUE;
  const timestampIndex = intervalIndex(field('timestamp'), plan, cal);
  let starts: Expr;
  if (plan.firstTime) {
    const first = intervalIndex(call('minIf', field('timestamp'), isEvent(plan.target)), plan, cal);
    starts = call('if', inRange(first, plan), { node: 'Array', exprs: [first] }, call('range', constant(0)));
  } else {
    starts = call('groupUniqArrayIf', timestampIndex, and([isEvent(plan.target), tsAfterStart(plan)]));
  }
  const returns = call('groupUniqArrayIf', timestampIndex, and([isEvent(plan.returning), tsAfterStart(plan)]));
  // First-time cohorts need each person's first target event ever; recurring ones the range alone.
  const targetWhere = plan.firstTime ? isEvent(plan.target) : and([isEvent(plan.target), tsAfterStart(plan)]);
  return {
    node: 'SelectQuery',
    select: [alias('actor', field('person_id')), alias('starts', starts), alias('returns', returns)],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: and([
      compare('<', field('timestamp'), at(plan.end)),
      { node: 'Or', exprs: [targetWhere, and([isEvent(plan.returning), tsAfterStart(plan)])] },
      ...propertyConditions(request.properties ?? [], filters),
    ]),
    group_by: [field('actor')],
  };
}

/** PostHog's rows: one per cohort, with a value per interval from it to the last, 0 where none. */
export function shapeRetention(rows: readonly unknown[][], plan: RetentionPlan, cal: InsightCalendar): RetentionResult[] {
  const counts = new Map(rows.map((r) => [`${asNumber(r[0])}:${asNumber(r[1])}`, asNumber(r[2])]));
  return Array.from({ length: plan.total }, (_, cohort) => ({
    date: cal.iso(cal.add(plan.start, plan.interval, cohort)),
    label: `${plan.period} ${cohort}`,
    values: Array.from({ length: plan.total - cohort }, (_, offset) => ({ count: counts.get(`${cohort}:${offset}`) ?? 0, label: `${plan.period} ${offset}` })),
  }));
}

export async function runRetentionQuery(request: RetentionQueryRequest, deps: InsightRunDeps): Promise<InsightResponse<RetentionResult>> {
  const started = performance.now();
  const plan = retentionPlan(request, deps.now, deps.calendar);
  const ast = buildRetentionQuery(plan, request, deps.filters, deps.calendar);
  const { data } = await deps.run(ast);
  return { results: shapeRetention(scaledRows(data, 2, samplingFactorOf(request)), plan, deps.calendar), hogql: deps.hogql(ast), timings: [{ k: '.', t: seconds(started) }], is_cached: false, last_refresh: deps.now.toISOString() };
}
