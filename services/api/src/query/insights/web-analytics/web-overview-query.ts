import type { Expr, SelectQuery } from '@tributary/hogql';
import { timedRun, type InsightRunDeps } from '../toolkit/insight-series.js';
import { call, field } from '../toolkit/hogql-builders.js';
import { perPeriod, webPeriods, webResponse, webSessions, type WebAnalyticsRequest, type WebPeriods } from './web-sessions.js';

/**
 * PostHog's `WebOverviewQuery`: visitors (persons), views (pageviews), sessions, mean session
 * duration and bounce rate of the sessions starting in the range, each beside the period before
 * when comparing, and its change in percent.
 */
export interface WebOverviewQueryRequest extends WebAnalyticsRequest {
  kind: 'WebOverviewQuery';
}

export type WebOverviewKind = 'unit' | 'duration_s' | 'percentage';

export interface WebOverviewItem {
  key: 'visitors' | 'views' | 'sessions' | 'session duration' | 'bounce rate';
  kind: WebOverviewKind;
  value: number | null;
  previous: number | null;
  changeFromPreviousPct: number | null;
  isIncreaseBad?: boolean;
}

/** PostHog's change: whole percent of the previous value, none from nothing. */
export function changeFromPrevious(value: number | null, previous: number | null): number | null {
  if (value === null || previous === null || previous === 0) return null;
  return Math.round((100 * (value - previous)) / previous);
}

export function webOverviewQuery(request: WebOverviewQueryRequest, periods: WebPeriods, deps: Pick<InsightRunDeps, 'filters'>): SelectQuery {
  const sessions = webSessions(request, periods, deps.filters);
  const sumIf = (column: string) => (p: Expr) => call('sumIf', field(column), p);
  return {
    node: 'SelectQuery',
    select: [
      ...perPeriod(periods, 'visitors', (p) => call('uniqExactIf', field('person_id'), p)),
      ...perPeriod(periods, 'views', sumIf('$pageview_count')),
      ...perPeriod(periods, 'sessions', (p) => call('countIf', p)),
      ...perPeriod(periods, 'duration', sumIf('$session_duration')),
      ...perPeriod(periods, 'bounces', sumIf('$is_bounce')),
    ],
    select_from: { node: 'JoinExpr', table: sessions },
  };
}

type Totals = Record<'visitors' | 'views' | 'sessions' | 'duration' | 'bounces', number>;

/** The items from each period's totals; mean duration and bounce rate are of its sessions, none without one. */
export function overviewItems(current: Totals, previous: Totals | null): WebOverviewItem[] {
  const perSession = (t: Totals | null, key: 'duration' | 'bounces', scale: number) => (t && t.sessions > 0 ? (t[key] / t.sessions) * scale : null);
  const item = (key: WebOverviewItem['key'], kind: WebOverviewKind, value: number | null, before: number | null, isIncreaseBad?: boolean): WebOverviewItem => ({
    key, kind, value, previous: before, changeFromPreviousPct: changeFromPrevious(value, before), ...(isIncreaseBad && { isIncreaseBad }),
  });
  return [
    item('visitors', 'unit', current.visitors, previous?.visitors ?? null),
    item('views', 'unit', current.views, previous?.views ?? null),
    item('sessions', 'unit', current.sessions, previous?.sessions ?? null),
    item('session duration', 'duration_s', perSession(current, 'duration', 1), perSession(previous, 'duration', 1)),
    item('bounce rate', 'percentage', perSession(current, 'bounces', 100), perSession(previous, 'bounces', 100), true),
  ];
}

export async function runWebOverviewQuery(request: WebOverviewQueryRequest, deps: InsightRunDeps): Promise<object> {
  const started = performance.now();
  const timings: { k: string; t: number }[] = [];
  const periods = webPeriods(request, deps.calendar, deps.now);
  const ast = webOverviewQuery(request, periods, deps);
  const { data } = await timedRun(deps, timings)(ast);
  const row = (data[0] ?? []).map((v) => (v === null ? null : Number(v)));
  const totals = (offset: number): Totals => ({ visitors: row[offset]!, views: row[offset + 2]!, sessions: row[offset + 4]!, duration: row[offset + 6]!, bounces: row[offset + 8]! });
  return { results: overviewItems(totals(0), periods.previous ? totals(1) : null), ...webResponse(periods, deps, ast, timings, started) };
}
