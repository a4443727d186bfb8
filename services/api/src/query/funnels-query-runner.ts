import { printHogQL, printQuery, type SelectQuery } from '@tributary/hogql';
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
import { seconds, type InsightResponse, type InsightRunDeps } from './insight-series.js';
import { bucketTime, resolveDateRange, topBreakdownValues } from './trends-query.js';

export type { FunnelsQueryRequest } from './funnels-query.js';

export interface FunnelsQueryResponse extends Omit<InsightResponse<never>, 'results'> {
  /** One list of steps, or one per breakdown value. */
  results: FunnelStepResult[] | FunnelStepResult[][];
  resolved_date_range?: { date_from: string; date_to: string };
}

/** Runs a FunnelsQuery (steps): its queries are HogQL trees, printed for the project by the HogQL printer. */
export async function runFunnelsQuery(request: FunnelsQueryRequest, deps: InsightRunDeps): Promise<FunnelsQueryResponse> {
  const started = performance.now();
  validateFunnelsQuery(request);
  const query = async (ast: SelectQuery) => (await deps.run(printQuery(ast, { teamId: deps.teamId }).clickhouse)).data;

  let earliest: Date | null = null;
  if (request.dateRange?.date_from === 'all') {
    const first = request.series[0]!.event;
    const ast: SelectQuery = {
      node: 'SelectQuery',
      select: [{ node: 'Call', name: 'min', args: [{ node: 'Field', chain: ['timestamp'] }] }],
      select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
      ...(first !== null && first !== undefined && { where: { node: 'CompareOperation', op: '==', left: { node: 'Field', chain: ['event'] }, right: { node: 'Constant', value: first } } }),
    };
    const [row] = await query(ast);
    const time = row ? bucketTime(row[0]) : Number.NaN;
    // min() over no rows is the epoch.
    earliest = Number.isFinite(time) && time > 0 ? new Date(time) : null;
  }
  const period = resolveDateRange(request.dateRange, 'day', deps.now, earliest);
  const input = { request, period, now: deps.now };

  let results: FunnelsQueryResponse['results'];
  let hogql: string;
  if (hasFunnelBreakdown(request)) {
    const top = topBreakdownValues(await query(buildFunnelBreakdownValuesQuery(input)), funnelBreakdownLimit(request));
    const ast = buildFunnelQuery(input, top);
    hogql = printHogQL(ast);
    results = top.values.length === 0 ? [] : shapeFunnelResults(request, await query(ast), true);
  } else {
    const ast = buildFunnelQuery(input);
    hogql = printHogQL(ast);
    results = shapeFunnelResults(request, await query(ast), false);
  }
  const timings = [{ k: './query', t: seconds(started) }, { k: '.', t: seconds(started) }];

  return {
    results,
    hogql,
    timings,
    is_cached: false,
    last_refresh: deps.now.toISOString(),
    resolved_date_range: { date_from: period.from.toISOString(), date_to: new Date(period.to.getTime() - 1000).toISOString() },
  };
}
