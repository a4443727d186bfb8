import { badRequest, bodySchemas, validate } from '@tributary/http';
import { normaliseTags } from '../http/tags.js';
import { isExperimentKind } from '../experiments/experiment-query.js';
import { QUERY_KINDS, QUERY_SCHEMAS } from '../query/query-schemas.js';
import type { QueryRequest } from '../query/query-service.js';

export interface CreateInsightBody {
  name: string;
  description: string;
  query: Record<string, unknown>;
  tags: string[];
  favorited: boolean;
  saved: boolean;
  dashboards: number[];
}

export interface PatchInsightBody {
  name?: string;
  description?: string;
  query?: Record<string, unknown>;
  tags?: string[];
  favorited?: boolean;
  saved?: boolean;
  deleted?: boolean;
  dashboards?: number[];
}

const name = { type: 'string', maxLength: 400 } as const;
const description = { type: 'string', maxLength: 4000 } as const;
const tags = { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 255 } } as const;
const dashboards = { type: 'array', maxItems: 100, items: { type: 'integer', minimum: 1, maximum: 999_999_999 } } as const;
const query = { type: 'object', required: ['kind'], properties: { kind: { type: 'string' } } } as const;

export const { create: createInsightSchema, patch: patchInsightSchema } = bodySchemas(
  { name, description, query, tags, favorited: { type: 'boolean' }, saved: { type: 'boolean' }, dashboards },
  { required: ['query'], defaults: { name: '', description: '', tags: [], favorited: false, saved: true, dashboards: [] }, patchOnly: { deleted: { type: 'boolean' } } },
);

export const listInsightsSchema = {
  type: 'object',
  properties: {
    short_id: { type: 'string', maxLength: 20 },
    favorited: { type: 'boolean' },
    saved: { type: 'boolean' },
    search: { type: 'string', maxLength: 400 },
    basic: { type: 'boolean', default: false },
    refresh: { type: 'string' },
  },
};

/** The nodes PostHog wraps a query in to show it: the insight kinds in InsightVizNode, SQL and event lists in a table or chart. */
const WRAPPERS: Record<string, readonly string[]> = {
  InsightVizNode: ['TrendsQuery', 'FunnelsQuery', 'RetentionQuery', 'LifecycleQuery', 'StickinessQuery'],
  DataVisualizationNode: ['HogQLQuery'],
  DataTableNode: ['HogQLQuery', 'EventsQuery'],
};

/** The query an insight runs: the wrapper's `source`, checked against its kind's schema. */
export function insightSource(query: Record<string, unknown>, attr = 'query'): QueryRequest {
  const kind = String(query.kind);
  const wrapped = WRAPPERS[kind];
  if (!wrapped) {
    // An experiment's metric is read through its experiment (experiment:read), not kept as an insight anyone with insight:read may run.
    const kinds = [...Object.keys(WRAPPERS), ...QUERY_KINDS.filter((k) => !isExperimentKind(k))];
    if (!kinds.includes(kind)) throw badRequest(`${attr}.kind must be one of ${kinds.join(', ')}: ${JSON.stringify(kind)}.`, `${attr}.kind`);
    return validate<QueryRequest>(QUERY_SCHEMAS[kind]!, structuredClone(query), attr);
  }
  const source = query.source as Record<string, unknown> | undefined;
  if (!source || typeof source !== 'object' || !wrapped.includes(String(source.kind))) {
    throw badRequest(`${attr}.source must be a query of kind ${wrapped.join(', ')} inside a ${kind}.`, `${attr}.source`);
  }
  return validate<QueryRequest>(QUERY_SCHEMAS[String(source.kind)]!, structuredClone(source), `${attr}.source`);
}

export function parseCreateInsight(raw: unknown): CreateInsightBody {
  const body = validate<CreateInsightBody>(createInsightSchema, structuredClone(raw ?? {}));
  insightSource(body.query);
  return { ...body, tags: normaliseTags(body.tags) };
}

export function parsePatchInsight(raw: unknown): PatchInsightBody {
  const body = validate<PatchInsightBody>(patchInsightSchema, structuredClone(raw ?? {}));
  if (body.query) insightSource(body.query);
  return { ...body, ...(body.tags && { tags: normaliseTags(body.tags) }) };
}
