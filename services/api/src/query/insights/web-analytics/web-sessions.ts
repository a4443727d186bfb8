import { sessionPropertyExpr, sessionsQuery, type Expr, type FilterContext, type SelectQuery } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import type { InsightCalendar, Period } from '../toolkit/insight-calendar.js';
import { seconds, type InsightRunDeps } from '../toolkit/insight-series.js';
import { alias, and, at, call, compare, constant, field } from '../toolkit/hogql-builders.js';
import { propertyConditions } from '../toolkit/property-conditions.js';

/**
 * What the web analytics kinds share: their periods (the range asked and, to compare, the one just
 * before), and the sessions they count, read through the HogQL `sessions` select under the
 * project's guard. A session belongs to the period its first event is in; only sessions with a
 * pageview count, as PostHog's web analytics counts them.
 */
export interface WebAnalyticsRequest {
  dateRange?: { date_from?: string | null; date_to?: string | null };
  properties?: StoredPropertyFilter[];
  compareFilter?: { compare?: boolean | null } | null;
  /** The older form of `compareFilter.compare`. */
  compare?: boolean | null;
}

export interface WebPeriods {
  current: Period;
  previous: Period | null;
}

/**
 * How far around the periods a session's events are read: a session's first and last event are
 * found within it, so a session up to this long is whole (PostHog ends a session after a day).
 */
export const SESSION_READ_MARGIN_MS = 24 * 60 * 60 * 1000;

export function webPeriods(request: WebAnalyticsRequest, calendar: InsightCalendar, now: Date): WebPeriods {
  const current = calendar.resolveDateRange(request.dateRange, 'day', now);
  const compare = request.compareFilter?.compare ?? request.compare ?? false;
  return { current, previous: compare ? calendar.previousPeriod(current, 'day') : null };
}

export const inPeriod = (period: Period): Expr => and([compare('>=', field('$start_timestamp'), at(period.from)), compare('<', field('$start_timestamp'), at(period.to))]);

/**
 * The sessions starting in either period, with a pageview: PostHog's session columns, the
 * session's person (`person_id`, its first event's) and `extra` aggregates over its events. Event
 * property filters pick the events sessions are made of; session ones (`type: 'session'`) the sessions.
 */
export function webSessions(request: WebAnalyticsRequest, periods: WebPeriods, filters: FilterContext, extra: [string, Expr][] = []): SelectQuery {
  const first = periods.previous ?? periods.current;
  const readFrom = new Date(first.from.getTime() - SESSION_READ_MARGIN_MS);
  const readTo = new Date(periods.current.to.getTime() + SESSION_READ_MARGIN_MS);
  const properties = request.properties ?? [];
  const onEvents = properties.filter((p) => p.type !== 'session');
  const onSessions = properties.flatMap((p, i) => (p.type === 'session' ? [sessionPropertyExpr(p, `properties[${i}]`, filters.now)] : []));
  const where = and([compare('>=', field('timestamp'), at(readFrom)), compare('<', field('timestamp'), at(readTo)), ...propertyConditions(onEvents, filters)]);
  const sessions = sessionsQuery({ where, extra: [['person_id', call('argMin', field('person_id'), field('timestamp'))], ...extra] });
  const periodsOf = periods.previous ? { node: 'Or' as const, exprs: [inPeriod(periods.current), inPeriod(periods.previous)] } : inPeriod(periods.current);
  return { ...sessions, where: and([compare('>', field('$pageview_count'), constant(0)), periodsOf, ...onSessions]) };
}

/** An aggregate over the sessions of a period (`Expr` of the period's condition); of the previous one only when comparing. */
export function perPeriod(periods: WebPeriods, name: string, aggregate: (inPeriod: Expr) => Expr): Expr[] {
  return [alias(name, aggregate(inPeriod(periods.current))), alias(`previous_${name}`, periods.previous ? aggregate(inPeriod(periods.previous)) : { node: 'Constant', value: null })];
}

/** What both kinds answer beside their results, as PostHog's responses: the range, the HogQL run, and the timings. */
export function webResponse(periods: WebPeriods, deps: InsightRunDeps, ast: SelectQuery, timings: { k: string; t: number }[], started: number): object {
  timings.push({ k: '.', t: seconds(started) });
  return {
    dateFrom: deps.calendar.iso(periods.current.from),
    dateTo: deps.calendar.iso(periods.current.to),
    samplingRate: { numerator: 1 },
    usedPreAggregatedTables: false,
    hogql: deps.hogql(ast),
    timings,
    is_cached: false,
    last_refresh: deps.now.toISOString(),
  };
}
