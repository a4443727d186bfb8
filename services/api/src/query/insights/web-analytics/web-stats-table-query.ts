import { queryError, type Expr, type SelectQuery } from '@tributary/hogql';
import { timedRun, type InsightRunDeps } from '../toolkit/insight-series.js';
import { alias, and, call, compare, constant, field } from '../toolkit/hogql-builders.js';
import { perPeriod, webPeriods, webResponse, webSessions, type WebAnalyticsRequest, type WebPeriods } from './web-sessions.js';

/**
 * PostHog's `WebStatsTableQuery`: visitors, views and bounce rate by one breakdown, each a
 * `[current, previous]` pair (previous null unless comparing), the most visitors first. Session
 * breakdowns (entry page, channel, referring domain, UTMs, exit page) are the session's; device,
 * browser, OS and place are its first pageview's (of those that have the property); `Page` is each
 * pageview's path, its bounce rate that of the sessions entering there.
 */
export const WEB_BREAKDOWNS = [
  'Page', 'InitialPage', 'ExitPage', 'InitialReferringDomain', 'InitialChannelType',
  'InitialUTMSource', 'InitialUTMMedium', 'InitialUTMCampaign', 'InitialUTMTerm', 'InitialUTMContent',
  'DeviceType', 'Browser', 'OS', 'Country', 'Region', 'City',
] as const;
export type WebBreakdown = (typeof WEB_BREAKDOWNS)[number];

export interface WebStatsTableQueryRequest extends WebAnalyticsRequest {
  kind: 'WebStatsTableQuery';
  breakdownBy: WebBreakdown;
  limit?: number | null;
}

export const WEB_STATS_LIMIT_DEFAULT = 10;
export const WEB_STATS_LIMIT_MAX = 1000;

export const WEB_STATS_COLUMNS = ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views', 'context.columns.bounce_rate'];

/** The session column each session breakdown reads. */
const SESSION_BREAKDOWNS: Partial<Record<WebBreakdown, string>> = {
  InitialPage: '$entry_pathname',
  ExitPage: '$end_pathname',
  InitialReferringDomain: '$entry_referring_domain',
  InitialChannelType: '$channel_type',
  InitialUTMSource: '$entry_utm_source',
  InitialUTMMedium: '$entry_utm_medium',
  InitialUTMCampaign: '$entry_utm_campaign',
  InitialUTMTerm: '$entry_utm_term',
  InitialUTMContent: '$entry_utm_content',
};

/** The event property each pageview breakdown reads. */
export const PAGEVIEW_BREAKDOWNS: Partial<Record<WebBreakdown, string>> = {
  DeviceType: '$device_type',
  Browser: '$browser',
  OS: '$os',
  Country: '$geoip_country_code',
  Region: '$geoip_subdivision_1_name',
  City: '$geoip_city_name',
};

const isPageview = compare('==', field('event'), constant('$pageview'));

/** The breakdown value of each session (or, for `Page`, of each pageview), and the aggregates sessions need for it. */
function breakdownOf(breakdown: WebBreakdown): { value: Expr; extra: [string, Expr][]; arrayJoin: boolean } {
  const column = SESSION_BREAKDOWNS[breakdown];
  if (column) return { value: field(column), extra: [], arrayJoin: false };
  const property = PAGEVIEW_BREAKDOWNS[breakdown];
  if (property) return { value: field('pageview_value'), extra: [['pageview_value', call('argMinIf', field('properties', property), field('timestamp'), isPageview)]], arrayJoin: false };
  // A nullable path is skipped by groupArrayIf: a pageview without one has no page.
  return { value: field('breakdown_value'), extra: [['pages', call('groupArrayIf', field('properties', '$pathname'), isPageview)]], arrayJoin: true };
}

export function webStatsTableQuery(request: WebStatsTableQueryRequest, periods: WebPeriods, deps: Pick<InsightRunDeps, 'filters'>, limit: number): SelectQuery {
  const breakdown = breakdownOf(request.breakdownBy);
  const sessions = webSessions(request, periods, deps.filters, breakdown.extra);
  const session = field('session_id');
  // A page repeats a session's row once per pageview: views count rows, visitors and bounces distinct sessions and persons.
  const entered = breakdown.arrayJoin ? compare('==', field('$entry_pathname'), field('breakdown_value')) : null;
  const bouncing = (p: Expr) => and([p, compare('==', field('$is_bounce'), constant(1)), ...(entered ? [entered] : [])]);
  const counted = (p: Expr) => and([p, ...(entered ? [entered] : [])]);
  const select: Expr[] = [
    ...(breakdown.arrayJoin ? [field('breakdown_value')] : [alias('breakdown_value', breakdown.value)]),
    ...perPeriod(periods, 'visitors', (p) => call('uniqExactIf', field('person_id'), p)),
    ...perPeriod(periods, 'views', (p) => (breakdown.arrayJoin ? call('countIf', p) : call('sumIf', field('$pageview_count'), p))),
    ...perPeriod(periods, 'bounces', (p) => call('uniqExactIf', session, bouncing(p))),
    ...perPeriod(periods, 'sessions', (p) => call('uniqExactIf', session, counted(p))),
  ];
  return {
    node: 'SelectQuery',
    select,
    select_from: { node: 'JoinExpr', table: sessions },
    ...(breakdown.arrayJoin && { array_join_op: 'ARRAY JOIN', array_join_list: [alias('breakdown_value', field('pages'))] }),
    where: call('isNotNull', breakdown.arrayJoin ? field('breakdown_value') : breakdown.value),
    group_by: [field('breakdown_value')],
    order_by: [
      { node: 'OrderExpr', expr: field('visitors'), order: 'DESC' },
      { node: 'OrderExpr', expr: field('views'), order: 'DESC' },
      { node: 'OrderExpr', expr: field('breakdown_value'), order: 'ASC' },
    ],
    limit: constant(limit + 1),
  };
}

const ratio = (part: number | null, whole: number | null): number | null => (part === null || !whole ? null : part / whole);

export async function runWebStatsTableQuery(request: WebStatsTableQueryRequest, deps: InsightRunDeps): Promise<object> {
  const started = performance.now();
  const timings: { k: string; t: number }[] = [];
  if (!WEB_BREAKDOWNS.includes(request.breakdownBy)) throw queryError(`WebStatsTableQuery: breakdownBy must be one of ${WEB_BREAKDOWNS.join(', ')}`);
  const periods = webPeriods(request, deps.calendar, deps.now);
  const limit = request.limit ?? WEB_STATS_LIMIT_DEFAULT;
  const ast = webStatsTableQuery(request, periods, deps, limit);
  const { data } = await timedRun(deps, timings)(ast);
  const number = (v: unknown) => (v === null ? null : Number(v));
  const rows = data.slice(0, limit).map((row) => {
    const [value, visitors, previousVisitors, views, previousViews, bounces, previousBounces, sessions, previousSessions] = [row[0], ...row.slice(1).map(number)];
    return [value, [visitors, previousVisitors], [views, previousViews], [ratio(bounces!, sessions!), ratio(previousBounces!, previousSessions!)]];
  });
  return {
    columns: WEB_STATS_COLUMNS,
    results: rows,
    types: ['String', 'Tuple(UInt64, UInt64)', 'Tuple(UInt64, UInt64)', 'Tuple(Float64, Float64)'],
    hasMore: data.length > limit,
    limit,
    offset: 0,
    ...webResponse(periods, deps, ast, timings, started),
  };
}
