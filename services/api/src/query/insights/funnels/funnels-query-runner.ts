import { type SelectQuery } from '@tributary/hogql';
import {
  buildFunnelBreakdownValuesQuery,
  buildFunnelQuery,
  funnelBreakdownLimit,
  hasFunnelBreakdown,
  shapeFunnelResults,
  validateFunnelsQuery,
  type FunnelStepResult,
  type FunnelsQueryRequest,
} from './funnels-query.js';
import { entityCondition, seconds, timedRun, type InsightResponse, type InsightRunDeps } from '../toolkit/insight-series.js';
import { firstEventQuery, momentOf } from '../toolkit/first-event.js';
import { topBreakdownValues } from '../toolkit/breakdown.js';

export type { FunnelsQueryRequest } from './funnels-query.js';

export interface FunnelsQueryResponse extends Omit<InsightResponse<never>, 'results'> {
  /** One list of steps, or one per breakdown value. */
  results: FunnelStepResult[] | FunnelStepResult[][];
  resolved_date_range?: { date_from: string; date_to: string };
}

/** Runs a FunnelsQuery (steps): its queries are HogQL trees, each printed for the project by `deps.run`. */
export async function runFunnelsQuery(request: FunnelsQueryRequest, deps: InsightRunDeps): Promise<FunnelsQueryResponse> {
  const started = performance.now();
  validateFunnelsQuery(request);
  const timings: { k: string; t: number }[] = [];
  const run = timedRun(deps, timings);
  const query = async (ast: SelectQuery) => (await run(ast)).data;

  let earliest: Date | null = null;
  if (request.dateRange?.date_from === 'all') {
    earliest = momentOf(await query(firstEventQuery([entityCondition(request.series[0]!, deps.filters)])));
  }
  const cal = deps.calendar;
  const period = cal.resolveDateRange(request.dateRange, 'day', deps.now, earliest);
  const input = { request, period, filters: deps.filters, cal };

  let results: FunnelsQueryResponse['results'];
  let hogql: string;
  if (hasFunnelBreakdown(request)) {
    const top = topBreakdownValues(await query(buildFunnelBreakdownValuesQuery(input)), funnelBreakdownLimit(request));
    const ast = buildFunnelQuery(input, top);
    hogql = deps.hogql(ast);
    results = top.values.length === 0 ? [] : shapeFunnelResults(request, await query(ast), true, deps.filters);
  } else {
    const ast = buildFunnelQuery(input);
    hogql = deps.hogql(ast);
    results = shapeFunnelResults(request, await query(ast), false, deps.filters);
  }
  timings.push({ k: './query', t: seconds(started) }, { k: '.', t: seconds(started) });

  return {
    results,
    hogql,
    timings,
    is_cached: false,
    last_refresh: deps.now.toISOString(),
    resolved_date_range: { date_from: cal.iso(period.from), date_to: cal.iso(new Date(period.to.getTime() - 1000)) },
  };
}
