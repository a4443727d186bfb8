import type { CompactResult } from '@tributary/clickhouse';
import { actionExpr, projectAction, queryError, type Expr, type FilterContext, type SelectLike } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import type { InsightCalendar, TrendsInterval } from './insight-calendar.js';
import { and, at, compare, constant, field } from './hogql-builders.js';
import { propertyConditions } from './property-conditions.js';

/**
 * What the insight queries share: their series (an `EventsNode` or `ActionsNode`),
 * the runner's dependencies, and the response envelope PostHog answers them in.
 */
export interface InsightEventsNode {
  /** An `EventsNode` (one event, or every event) or an `ActionsNode` (one of the project's actions, by `id`). */
  kind?: 'EventsNode' | 'ActionsNode';
  event?: string | null;
  id?: number;
  name?: string;
  custom_name?: string;
  properties?: StoredPropertyFilter[];
}

/** The condition an event meets to count for a series or step: its event name or its action's; null for every event. */
export function entityCondition(series: Pick<InsightEventsNode, 'kind' | 'event' | 'id'>, filters: FilterContext): Expr | null {
  if (series.kind === 'ActionsNode') return actionExpr(projectAction(filters, series.id!), filters);
  return series.event === null || series.event === undefined ? null : compare('==', field('event'), constant(series.event));
}

/** What PostHog's results say a series is: its event (`type: 'events'`, `id` the name) or its action (`type: 'actions'`, `id` the number), and its name. */
export interface SeriesEntity {
  id: string | number | null;
  type: 'events' | 'actions';
  name: string;
}
export function entityOf(series: Pick<InsightEventsNode, 'kind' | 'event' | 'id'>, filters: FilterContext): SeriesEntity {
  if (series.kind === 'ActionsNode') return { id: series.id!, type: 'actions', name: projectAction(filters, series.id!).name };
  return { id: series.event ?? null, type: 'events', name: series.event ?? 'All events' };
}

export interface InsightRunDeps {
  now: Date;
  /** `now` and the cohorts the request's filters name, for its property filters. */
  filters: FilterContext;
  /** The project's timezone, which buckets and dates follow. */
  calendar: InsightCalendar;
  /** Prints one query for the project (the printer adds its tenant guard) and runs it in ClickHouse with the query endpoint's settings. */
  run: (query: SelectLike) => Promise<CompactResult>;
  /** A query's HogQL as `run` runs it (with the SAMPLE a samplingFactor adds), for the answer's `hogql`. */
  hogql: (query: SelectLike) => string;
}

export interface InsightResponse<Result> {
  results: Result[];
  /** The HogQL of the (first) query, as PostHog answers it. */
  hogql: string;
  timings: { k: string; t: number }[];
  is_cached: false;
  last_refresh: string;
}

export const seconds = (from: number): number => Number(((performance.now() - from) / 1000).toFixed(6));

/** Runs statements as `deps.run` does, adding each one's time to `timings` as `./clickhouse_execute/<n>`, to tell which one is slow. */
export function timedRun(deps: InsightRunDeps, timings: { k: string; t: number }[]): (query: SelectLike) => Promise<CompactResult> {
  let statements = 0;
  return async (query) => {
    const started = performance.now();
    const result = await deps.run(query);
    timings.push({ k: `./clickhouse_execute/${statements++}`, t: seconds(started) });
    return result;
  };
}

/** The interval of a query, refused by name when it is not one the query buckets by. */
export function intervalOf<I extends TrendsInterval>(value: unknown, allowed: readonly I[], fallback: I, kind: string): I {
  if (value === undefined || value === null) return fallback;
  if (!allowed.includes(value as I)) throw queryError(`${kind}: interval must be one of ${allowed.join(', ')}`);
  return value as I;
}

/** The series' event name (or every event), in [from, to), with its own and the query's property filters. */
export function seriesWhere(series: InsightEventsNode, from: Date, to: Date, properties: readonly StoredPropertyFilter[] | undefined, filters: FilterContext): Expr {
  const where: Expr[] = [compare('>=', field('timestamp'), at(from)), compare('<', field('timestamp'), at(to))];
  const entity = entityCondition(series, filters);
  if (entity) where.unshift(entity);
  where.push(...propertyConditions([...(series.properties ?? []), ...(properties ?? [])], filters));
  return and(where);
}


/** The only series of a query that takes one. */
export function singleSeries(series: readonly InsightEventsNode[] | undefined, kind: string): InsightEventsNode {
  if (!Array.isArray(series) || series.length !== 1) throw queryError(`${kind}: series must hold exactly one EventsNode or ActionsNode`);
  return series[0]!;
}
