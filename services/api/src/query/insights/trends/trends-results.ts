import type { InsightCalendar, Period, TrendsInterval } from '../toolkit/insight-calendar.js';
import type { SeriesEntity } from '../toolkit/insight-series.js';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER } from '../toolkit/breakdown.js';
import { asNumber, zeroFill } from '../toolkit/result-values.js';
import { evaluateFormula, seriesLetter, type Formula } from './trends-formula.js';
import { hasBreakdown, isTotalValue, type TrendsEventsNode, type TrendsMath, type TrendsQueryRequest } from './trends-query.js';
import { scaledCount } from '../toolkit/sampling.js';

/** A TrendsQuery's rows shaped as PostHog answers them: one result per series (and breakdown value), its formula applied. */

export interface TrendsAction {
  days: string[];
  id: string | number | null;
  type: 'events' | 'actions';
  order: number;
  name: string;
  custom_name: string | null;
  math: string | null;
  math_property: string | null;
  math_hogql: null;
  math_group_type_index: number | null;
  properties: Record<string, never>;
}

export interface TrendsResult {
  action: TrendsAction | null;
  label: string;
  count: number;
  data: number[] | null;
  labels?: string[];
  days: string[];
  breakdown_value?: string;
  compare?: boolean;
  compare_label?: 'current' | 'previous';
  aggregated_value?: number;
  filter: Record<string, unknown>;
}

/** One series' answer over one period, as rows of ClickHouse (`[bucket?, breakdown_value?, total]`). */
export interface SeriesRun {
  series: TrendsEventsNode;
  /** What the series counts, as its results name it. */
  entity: SeriesEntity;
  order: number;
  period: Period;
  previous: boolean;
  rows: unknown[][];
  /** The breakdown values in the order found (top ones first), "other" last, when broken down. */
  breakdownValues?: string[];
}

/** PostHog's echo of the query as a legacy filter. */
export function filterOf(request: TrendsQueryRequest, period: Period, interval: TrendsInterval, cal: InsightCalendar): Record<string, unknown> {
  const filter: Record<string, unknown> = {
    insight: 'TRENDS',
    properties: request.properties ?? [],
    date_from: cal.iso(period.from),
    date_to: cal.iso(new Date(period.to.getTime() - 1000)),
    entity_type: 'events',
    interval,
    ...request.trendsFilter,
    ...request.breakdownFilter,
  };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined && v !== null));
}

/** Shapes one series' rows into PostHog's results: one per breakdown value (or one), buckets zero-filled. */
export function shapeSeries(run: SeriesRun, request: TrendsQueryRequest, interval: TrendsInterval, filter: Record<string, unknown>, cal: InsightCalendar): TrendsResult[] {
  const { series, period, rows } = run;
  const total = isTotalValue(request);
  const broken = hasBreakdown(request);
  const days = period.buckets.map((b) => cal.formatDay(b, interval));
  const { name } = run.entity;
  const action: TrendsAction = {
    days,
    id: run.entity.id,
    type: run.entity.type,
    order: run.order,
    name,
    custom_name: series.custom_name ?? null,
    math: series.math ?? null,
    math_property: series.math_property ?? null,
    math_hogql: null,
    math_group_type_index: series.math_group_type_index ?? null,
    properties: {},
  };
  const groups: { value: string | undefined; rows: unknown[][] }[] = broken ? (run.breakdownValues ?? []).map((value) => ({ value, rows: [] })) : [{ value: undefined, rows }];
  if (broken) {
    const byValue = new Map(groups.map((g) => [g.value, g]));
    for (const row of rows) byValue.get(String(row[total ? 0 : 1]))?.rows.push(row);
  }
  const seriesCount = request.series.length;
  return groups.map(({ value, rows: groupRows }) => {
    const result: TrendsResult = total
      ? { data: [], days: [], count: 0, aggregated_value: asNumber(groupRows[0]?.at(-1)), label: name, filter, action }
      : (() => {
          const data = zeroFill(groupRows.map((r) => ({ bucket: r[0], value: r.at(-1) })), period.buckets, interval, cal);
          return { data, labels: period.buckets.map((b) => cal.formatLabel(b, interval)), days, count: data.reduce((a, b) => a + b, 0), label: name, filter, action };
        })();
    if (request.compareFilter?.compare) {
      result.compare = true;
      result.compare_label = run.previous ? 'previous' : 'current';
    }
    if (value !== undefined) {
      result.breakdown_value = value;
      result.label = seriesCount > 1 ? `${name} - ${value}` : value;
    }
    return result;
  });
}

/** The maths that grow with the persons read: measured on a sample, scaled to the whole. Averages, extremes and quantiles are what they are. */
const SCALED_MATHS: ReadonlySet<TrendsMath> = new Set(['total', 'dau', 'weekly_active', 'monthly_active', 'unique_session', 'unique_group', 'sum']);

/** A series' results read from a sample (`factor`), scaled as PostHog's `correct_result_for_sampling` scales them, before any formula. */
export function scaleSampledSeries(results: TrendsResult[], series: TrendsEventsNode, factor: number | null): TrendsResult[] {
  if (factor === null || !SCALED_MATHS.has(series.math ?? 'total')) return results;
  return results.map((result) => {
    const data = result.data && result.data.map((value) => scaledCount(value, factor));
    return {
      ...result,
      data,
      count: data && data.length ? data.reduce((a, b) => a + b, 0) : scaledCount(result.count, factor),
      ...(result.aggregated_value !== undefined && { aggregated_value: scaledCount(result.aggregated_value, factor) }),
    };
  });
}

/** Orders a series' breakdown results as PostHog does: by size, the null value then "other" last. */
export function sortBreakdownResults(results: TrendsResult[]): TrendsResult[] {
  const rank = (r: TrendsResult) => (r.breakdown_value === BREAKDOWN_OTHER ? 2 : r.breakdown_value === BREAKDOWN_NULL ? 1 : 0);
  const size = (r: TrendsResult) => r.aggregated_value ?? r.count;
  return [...results].sort((a, b) => rank(a) - rank(b) || size(b) - size(a));
}

/**
 * Replaces the series by the formula's result, per bucket (or over the total), per breakdown value
 * and per compared period, as PostHog's `apply_formula`: a value a series lacks is 0.
 */
export function applyFormula(results: TrendsResult[], formula: Formula, formulaText: string, seriesCount: number, totalValue: boolean): TrendsResult[] {
  const keyOf = (r: TrendsResult) => `${r.compare_label ?? ''}\u0000${r.breakdown_value ?? ''}`;
  const groups = new Map<string, Map<number, TrendsResult>>();
  for (const r of results) {
    const key = keyOf(r);
    if (!groups.has(key)) groups.set(key, new Map());
    groups.get(key)!.set(r.action?.order ?? 0, r);
  }
  const out: TrendsResult[] = [];
  for (const members of groups.values()) {
    const base = [...members.values()][0]!;
    const letters = (pick: (r: TrendsResult) => number) => {
      const values: Record<string, number> = {};
      for (let i = 0; i < seriesCount; i++) {
        const r = members.get(i);
        values[seriesLetter(i)] = r ? pick(r) : 0;
      }
      return values;
    };
    const result: TrendsResult = { ...base, action: null, label: `Formula (${formulaText})` };
    if (totalValue) {
      result.aggregated_value = evaluateFormula(formula, letters((r) => r.aggregated_value ?? 0));
      result.data = null;
      result.count = 0;
    } else {
      const length = base.data?.length ?? 0;
      result.data = Array.from({ length }, (_, i) => evaluateFormula(formula, letters((r) => r.data?.[i] ?? 0)));
      result.count = result.data.reduce((a, b) => a + b, 0);
    }
    out.push(result);
  }
  return out;
}
