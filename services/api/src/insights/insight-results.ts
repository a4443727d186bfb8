import { HttpError } from '@tributary/http';
import type { RefreshMode } from '../query/insight-cache.js';
import type { QueryProject, QueryService } from '../query/query-service.js';
import { insightSource } from './insight-requests.js';

/** What PostHog adds to a saved insight about its answer. */
export interface InsightResultFields {
  result: unknown[] | null;
  hasMore: boolean;
  columns: string[] | null;
  types: unknown[] | null;
  hogql: string | null;
  resolved_date_range: unknown;
  last_refresh: string | null;
  is_cached: boolean;
  cache_target_age: null;
  next_allowed_client_refresh: null;
  query_status: null | { complete: true; error: true; error_message: string };
  timezone: string;
}

const NOTHING = { result: null, hasMore: false, columns: null, types: null, hogql: null, resolved_date_range: null, last_refresh: null, is_cached: false, cache_target_age: null, next_allowed_client_refresh: null, query_status: null };

/** A tile's answer: a query it cannot run (a bad stored query, a timeout) is that tile's error, not the dashboard's. */
export async function tileResult(queries: QueryService, project: QueryProject, query: Record<string, unknown> | null, refresh: RefreshMode, signal: AbortSignal): Promise<InsightResultFields> {
  try {
    return await insightResult(queries, project, query, refresh, signal);
  } catch (error) {
    if (!(error instanceof HttpError) || error.status >= 500 || error.status === 499) throw error;
    return { ...NOTHING, timezone: project.timezone, query_status: { complete: true, error: true, error_message: error.detail } };
  }
}

/**
 * The answer to an insight's query by `refresh`, through the query service (its cache, limits and
 * tenant guard). An insight without a query (a legacy `filters` one) has no answer; so has one
 * `force_cache` finds nothing for.
 */
export async function insightResult(queries: QueryService, project: QueryProject, query: Record<string, unknown> | null, refresh: RefreshMode, signal: AbortSignal): Promise<InsightResultFields> {
  const base = { ...NOTHING, timezone: project.timezone };
  if (!query) return base;
  const answer = (await queries.run(project, insightSource(query), signal, { refresh })) as Record<string, unknown>;
  return {
    ...base,
    result: (answer.results as unknown[] | null) ?? null,
    hasMore: Boolean(answer.hasMore),
    columns: (answer.columns as string[] | undefined) ?? null,
    types: (answer.types as unknown[] | undefined) ?? null,
    hogql: (answer.hogql as string | undefined) ?? null,
    resolved_date_range: answer.resolved_date_range ?? null,
    last_refresh: (answer.last_refresh as string | null | undefined) ?? null,
    is_cached: Boolean(answer.is_cached),
  };
}
