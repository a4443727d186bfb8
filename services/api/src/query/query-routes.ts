import { Router } from 'express';
import { requireKeyScopes } from '@tributary/auth/personal-api-key-access';
import { badRequest, documented, validate, validateBody } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { isExperimentKind } from '../experiments/experiment-query.js';
import { clientSignal } from '../http/responses.js';
import { refreshMode } from './insight-cache.js';
import type { QueryRequest, QueryService } from './query-service.js';
import { QUERY_KINDS, QUERY_SCHEMAS } from './query-schemas.js';

const CLIENT_QUERY_ID = /^[A-Za-z0-9_-]{1,64}$/;

const bodySchema = {
  type: 'object',
  required: ['query'],
  properties: {
    query: { type: 'object', required: ['kind'], properties: { kind: { type: 'string' } } },
    refresh: { type: ['string', 'boolean'] },
    client_query_id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'names the query in ClickHouse (letters, digits, _ and -, at most 64)' },
    name: { type: 'string' },
    async: { type: 'boolean' },
  },
};

const responseSchema = {
  type: 'object',
  properties: {
    results: { type: 'array', description: 'Rows (arrays) for HogQLQuery and EventsQuery; one object per series, breakdown value and period for TrendsQuery; one {source, target, value, average_conversion_time} edge per pair of steps for PathsQuery; one row per person for ActorsQuery' },
    is_cached: { type: 'boolean' },
    last_refresh: { type: 'string' },
    columns: { type: 'array', items: { type: 'string' } },
    types: { type: 'array' },
    hogql: { type: 'string' },
    clickhouse: { type: 'string' },
    hasMore: { type: 'boolean' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    timings: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' }, t: { type: 'number' } } } },
    samplingRate: {
      type: 'object',
      description: "Present when an insight's samplingFactor sampled it: the share of persons read (numerator / denominator); its counts are scaled to all of them",
      properties: { numerator: { type: 'number' }, denominator: { type: 'number' } },
    },
  },
};

/** `/api/environments/:project_id/query/`: PostHog's query endpoint, for HogQL, EventsQuery, the insight kinds and experiments' metrics. */
export function queryRoutes(service: QueryService): Router {
  const router = Router({ mergeParams: true });
  router.post(
    '/',
    requireScopes('query:read'),
    documented({
      summary: 'Run a query: HogQLQuery (SQL over events, persons, person_distinct_ids, groups, sessions), EventsQuery, an insight (TrendsQuery, FunnelsQuery, StickinessQuery, LifecycleQuery, RetentionQuery, PathsQuery), the persons behind one of its points (ActorsQuery), web analytics (WebOverviewQuery, WebStatsTableQuery), or an experiment\'s metric (ExperimentTrendsQuery, ExperimentFunnelsQuery with its experiment_id)',
      description: 'Every table a query reads is limited to this project. Queries without LIMIT return 100 rows and say whether there are more; none returns more than 50,000.',
      body: bodySchema,
      responses: { '200': { description: 'The rows, with their columns and types, and the query as it ran', schema: responseSchema } },
    }),
    async (req, res) => {
      // documented() checks only a body that came; a request without one is held to the schema here.
      const body = validateBody<{ query: { kind: string }; client_query_id?: string; refresh?: unknown }>(bodySchema, req);
      const kind = body.query.kind;
      if (!Object.hasOwn(QUERY_SCHEMAS, kind)) {
        throw badRequest(`Query kind ${JSON.stringify(kind)} is not supported; use one of ${QUERY_KINDS.join(', ')}.`, 'query.kind', 'unsupported_query_kind');
      }
      const request = validate<QueryRequest>(QUERY_SCHEMAS[kind]!, body.query, 'query');
      // An experiment's metric reads the experiment (its flag, variants and dates): its results need what the results endpoint needs.
      if (isExperimentKind(kind)) requireKeyScopes(principalOf(req).key, ['experiment:read']);
      // A client that goes away (a closed tab, a cancelled request) stops its query in ClickHouse.
      const answer = await service.run(projectOf(req), request, clientSignal(res), { clientQueryId: body.client_query_id, refresh: refreshMode(body.refresh, 'blocking') });
      res.json(answer);
    },
  );
  router.delete(
    '/:client_query_id',
    requireScopes('query:read'),
    documented({ summary: 'Cancel the running queries this project sent with this client_query_id', responses: { '204': { description: 'Cancelled, or nothing of that id was running' } } }),
    async (req, res) => {
      const id = String(req.params.client_query_id);
      if (!CLIENT_QUERY_ID.test(id)) throw badRequest(`client_query_id must be letters, digits, _ and -, at most 64: ${JSON.stringify(id)}.`, 'client_query_id');
      await service.cancel(projectOf(req).id, id);
      res.status(204).end();
    },
  );
  return router;
}
