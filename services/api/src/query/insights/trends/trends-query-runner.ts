import type { SelectQuery } from '@tributary/hogql';
import { firstEventQuery, momentOf } from '../toolkit/first-event.js';
import { entityCondition, entityOf, seconds, timedRun, type InsightResponse, type InsightRunDeps } from '../toolkit/insight-series.js';
import { parseFormula } from './trends-formula.js';
import { samplingFactorOf } from '../toolkit/sampling.js';
import { BREAKDOWN_OTHER, DEFAULT_BREAKDOWN_LIMIT, topBreakdownValues } from '../toolkit/breakdown.js';
import type { Period } from '../toolkit/insight-calendar.js';
import { breakdownCountRows, buildBreakdownCountQuery, countsInOnePass, buildBreakdownValuesQuery, buildSeriesQuery, hasBreakdown, isTotalValue, type TrendsQueryRequest } from './trends-query.js';
import { applyFormula, filterOf, scaleSampledSeries, shapeSeries, sortBreakdownResults, type SeriesRun, type TrendsResult } from './trends-results.js';

export type { TrendsQueryRequest } from './trends-query.js';

export interface TrendsQueryResponse extends InsightResponse<TrendsResult> {
  hasMore: boolean;
  resolved_date_range: { date_from: string; date_to: string };
}

/** Runs a TrendsQuery: its queries are HogQL trees, one per series and period, each printed for the project by `deps.run`. */
export async function runTrendsQuery(request: TrendsQueryRequest, deps: InsightRunDeps): Promise<TrendsQueryResponse> {
  const started = performance.now();
  const cal = deps.calendar;
  const timings: { k: string; t: number }[] = [];
  const interval = request.interval ?? 'day';
  const formulaText = request.trendsFilter?.formula?.trim() || null;
  const formula = formulaText ? await parseFormula(formulaText, request.series.length) : null;
  const run = timedRun(deps, timings);
  const query = async (ast: SelectQuery) => (await run(ast)).data;

  let earliest: Date | null = null;
  if (request.dateRange?.date_from === 'all') {
    earliest = momentOf(await query(firstEventQuery(request.series.map((s) => entityCondition(s, deps.filters)))));
  }
  const current = cal.resolveDateRange(request.dateRange, interval, deps.now, earliest);
  const periods: [Period, boolean][] = [[current, false]];
  if (request.compareFilter?.compare) periods.push([cal.previousPeriod(current, interval), true]);

  const breakdownLimit = request.breakdownFilter?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT;
  const runs: SeriesRun[] = [];
  let hogql: string | null = null;
  let hasMore = false;
  // As PostHog orders them: every series of the current period, then every series of the previous one.
  for (const [period, previous] of periods) {
    for (const [order, series] of request.series.entries()) {
      const input = { request, series, period, interval, filters: deps.filters, cal };
      const entity = entityOf(series, deps.filters);
      if (!hasBreakdown(request)) {
        const ast = buildSeriesQuery(input);
        hogql ??= deps.hogql(ast);
        runs.push({ series, entity, order, period, previous, rows: await query(ast) });
        continue;
      }
      if (countsInOnePass(series)) {
        const ast = buildBreakdownCountQuery(input);
        hogql ??= deps.hogql(ast);
        const { rows, values, other } = breakdownCountRows(await query(ast), breakdownLimit, input);
        hasMore ||= other;
        runs.push({ series, entity, order, period, previous, rows, breakdownValues: values });
        continue;
      }
      const top = topBreakdownValues(await query(buildBreakdownValuesQuery(input)), breakdownLimit);
      const ast = buildSeriesQuery(input, top);
      hogql ??= deps.hogql(ast);
      if (top.values.length === 0) {
        runs.push({ series, entity, order, period, previous, rows: [], breakdownValues: [] });
        continue;
      }
      hasMore ||= top.other;
      runs.push({ series, entity, order, period, previous, rows: await query(ast), breakdownValues: [...top.values, ...(top.other ? [BREAKDOWN_OTHER] : [])] });
    }
  }
  timings.push({ k: './queries', t: seconds(started) });

  let results = runs.flatMap((run) => {
    const shaped = scaleSampledSeries(shapeSeries(run, request, interval, filterOf(request, run.period, interval, cal), cal), run.series, samplingFactorOf(request));
    return hasBreakdown(request) ? sortBreakdownResults(shaped) : shaped;
  });
  if (formula) results = applyFormula(results, formula, formulaText!, request.series.length, isTotalValue(request));
  timings.push({ k: '.', t: seconds(started) });

  return {
    results,
    hasMore,
    hogql: hogql ?? '',
    timings,
    is_cached: false,
    last_refresh: deps.now.toISOString(),
    resolved_date_range: { date_from: cal.iso(current.from), date_to: cal.iso(new Date(current.to.getTime() - 1000)) },
  };
}
