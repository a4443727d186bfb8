import { pathsView, type PathsView } from './paths-view.js';

/**
 * Turns a query's `results`, in PostHog's shapes, into what the console draws: trends, lifecycle
 * and stickiness as lines (or bars and tables when the insight's display asks), funnels as bars,
 * retention as a triangle, paths as a Sankey diagram. Pure, so the shapes are tested without a browser.
 */
export interface Series {
  label: string;
  data: number[];
}

export type InsightView =
  | { type: 'line' | 'bar'; labels: string[]; series: Series[] }
  | { type: 'table'; columns: string[]; rows: (string | number)[][] }
  | { type: 'retention'; periods: string[]; cohorts: RetentionCohort[] }
  | PathsView
  | { type: 'empty' }
  | { type: 'unsupported'; kind: string };

export interface RetentionCohort {
  label: string;
  size: number;
  /** Share of the cohort still there in each period, as a percentage; only periods that have happened. */
  percentages: number[];
  counts: number[];
}

export interface InsightSource {
  kind: string;
  trendsFilter?: { display?: string };
}

interface TrendResult {
  label?: string;
  data?: number[];
  labels?: string[];
  days?: string[];
  count?: number;
  aggregated_value?: number;
}

interface FunnelStep {
  name?: string;
  custom_name?: string | null;
  order?: number;
  count?: number;
  breakdown_value?: unknown;
}

interface RetentionRow {
  date?: string;
  label?: string;
  values?: { count: number; label?: string }[];
}

export function insightView(source: InsightSource, results: unknown): InsightView {
  if (!Array.isArray(results) || results.length === 0) return { type: 'empty' };
  switch (source.kind) {
    case 'FunnelsQuery':
      return funnelView(results as FunnelStep[] | FunnelStep[][]);
    case 'RetentionQuery':
      return retentionView(results as RetentionRow[]);
    case 'TrendsQuery':
      return trendsView(results as TrendResult[], source.trendsFilter?.display);
    case 'LifecycleQuery':
    case 'StickinessQuery':
      return lineView(results as TrendResult[]);
    case 'PathsQuery':
      return pathsView(results);
    default:
      return { type: 'unsupported', kind: source.kind };
  }
}

// PostHog's names for the breakdown values past the limit and for events without the property.
const BREAKDOWN_PLACEHOLDERS: Record<string, string> = { $$_posthog_breakdown_other_$$: 'Other', $$_posthog_breakdown_null_$$: 'None' };
const shownLabel = (r: TrendResult) => (r.label !== undefined && Object.hasOwn(BREAKDOWN_PLACEHOLDERS, r.label) ? BREAKDOWN_PLACEHOLDERS[r.label]! : (r.label ?? ''));

// Displays that show one number per series rather than one per day.
const TOTAL_DISPLAYS = new Set(['ActionsBarValue', 'ActionsPie', 'BoldNumber']);

function trendsView(results: TrendResult[], display: string | undefined): InsightView {
  const total = (r: TrendResult) => r.aggregated_value ?? r.count ?? (r.data ?? []).reduce((a, b) => a + b, 0);
  if (display === 'ActionsTable') return { type: 'table', columns: ['Series', 'Total'], rows: results.map((r) => [shownLabel(r), total(r)]) };
  if (display && TOTAL_DISPLAYS.has(display)) {
    return { type: 'bar', labels: results.map(shownLabel), series: [{ label: 'Total', data: results.map(total) }] };
  }
  return lineView(results);
}

function lineView(results: TrendResult[]): InsightView {
  return {
    type: 'line',
    labels: results[0]?.labels ?? results[0]?.days ?? [],
    series: results.map((r) => ({ label: shownLabel(r), data: r.data ?? [] })),
  };
}

function funnelView(results: FunnelStep[] | FunnelStep[][]): InsightView {
  // A funnel with a breakdown answers one list of steps per breakdown value.
  const groups = Array.isArray(results[0]) ? (results as FunnelStep[][]) : [results as FunnelStep[]];
  const steps = groups[0] ?? [];
  return {
    type: 'bar',
    labels: steps.map((step, i) => `${(step.order ?? i) + 1}. ${step.custom_name || step.name || ''}`),
    series: groups.map((group) => ({
      label: groups.length > 1 ? String(group[0]?.breakdown_value ?? '') : 'Persons',
      data: group.map((step) => step.count ?? 0),
    })),
  };
}

function retentionView(rows: RetentionRow[]): InsightView {
  const periods = (rows[0]?.values ?? []).map((v, i) => v.label ?? `Period ${i}`);
  return {
    type: 'retention',
    periods,
    cohorts: rows.map((row) => {
      const counts = (row.values ?? []).map((v) => v.count);
      const size = counts[0] ?? 0;
      return {
        label: row.date ? row.date.slice(0, 10) : (row.label ?? ''),
        size,
        counts,
        percentages: counts.map((count) => (size === 0 ? 0 : Math.round((count / size) * 1000) / 10)),
      };
    }),
  };
}
