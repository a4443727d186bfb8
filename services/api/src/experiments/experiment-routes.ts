import { Router, type Request } from 'express';
import type { FeatureFlagStore } from '@tributary/control-plane';
import { PAGE_SCHEMA, badRequest, bodySchemas, documented, notFound, validateBody, validateQuery } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import type { LinkedFlags } from '../feature-flags/linked-flags.js';
import { idParam } from '../http/id-param.js';
import { listRoute } from '../http/list-route.js';
import { clientSignal } from '../http/responses.js';
import type { QueryService } from '../query/query-service.js';
import { MAX_METRICS, metricsSchema } from './experiment-metrics.js';
import type { ExperimentService } from './experiment-service.js';
import type { ExperimentFields, ExperimentRow, ExperimentStore } from './experiment-store.js';

const date = { type: ['string', 'null'], maxLength: 64 } as const;

const { create: createSchema, patch: patchSchema } = bodySchemas(
  {
    name: { type: 'string', minLength: 1, maxLength: 400 },
    description: { type: 'string', maxLength: 10_000 },
    parameters: {
      type: 'object',
      properties: {
        feature_flag_variants: {
          type: 'array',
          maxItems: 20,
          items: {
            type: 'object',
            required: ['key', 'rollout_percentage'],
            properties: {
              key: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[a-zA-Z0-9_-]+$', description: 'letters, digits, _ and -' },
              name: { type: 'string', maxLength: 400 },
              rollout_percentage: { type: 'integer', minimum: 0, maximum: 100 },
            },
          },
        },
        minimum_detectable_effect: { type: 'number', minimum: 0, maximum: 100 },
      },
    },
    metrics: metricsSchema,
    metrics_secondary: metricsSchema,
    exposure_criteria: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: { filterTestAccounts: { type: 'boolean' }, multiple_variant_handling: { enum: ['exclude', 'first_seen'] } },
    },
    start_date: date,
    end_date: date,
    archived: { type: 'boolean' },
  },
  {
    required: ['name', 'feature_flag_key'],
    defaults: { description: '', parameters: {}, metrics: [], metrics_secondary: [], exposure_criteria: null, start_date: null, end_date: null, archived: false },
    createOnly: { feature_flag_key: { type: 'string', minLength: 1, maxLength: 400, pattern: '^[a-zA-Z0-9_-]+$', description: 'letters, digits, _ and -' } },
  },
);

const resultsQuery = {
  type: 'object',
  properties: { metric_index: { type: 'integer', minimum: 0, maximum: MAX_METRICS - 1, default: 0 }, secondary: { type: 'boolean', default: false } },
} as const;

/** An experiment as PostHog's ExperimentSerializer answers it; `flag` is its flag as the caller may see it. */
function present(row: ExperimentRow, flag: ExperimentRow['feature_flag']) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    start_date: row.start_date?.toISOString() ?? null,
    end_date: row.end_date?.toISOString() ?? null,
    feature_flag_key: row.feature_flag?.key ?? null,
    feature_flag: flag,
    holdout: null,
    exposure_cohort: null,
    parameters: row.parameters,
    secondary_metrics: [],
    saved_metrics: [],
    filters: {},
    archived: row.archived,
    deleted: false,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    type: 'product',
    exposure_criteria: row.exposure_criteria,
    metrics: row.metrics,
    metrics_secondary: row.metrics_secondary,
    stats_config: { version: 2 },
  };
}

const experimentId = (req: Request) => idParam(req, 'Experiment');

/**
 * `/experiments/`: PostHog's experiments, each reading a multivariate flag of its project, and
 * `/experiments/:id/results/`: one metric's reading per variant (chance to win, credible
 * intervals, significance) from that project's `$feature_flag_called` exposures.
 */
export function experimentRoutes(deps: {
  experiments: ExperimentStore;
  experimentService: ExperimentService;
  flags: Pick<FeatureFlagStore, 'getByKey'>;
  linkedFlags: LinkedFlags;
  query: QueryService;
  publicUrl: string;
}): Router {
  const router = Router({ mergeParams: true });
  const { experiments, experimentService: service, linkedFlags: linked } = deps;
  const show = async (req: Request, row: ExperimentRow) => present(row, await linked.visible(req, row.feature_flag));
  const get = async (req: Request) => {
    const row = await experiments.get(projectOf(req).id, experimentId(req));
    if (!row) throw notFound(`Experiment ${req.params.id} does not exist.`);
    return row;
  };

  router.get('/', requireScopes('experiment:read'), documented({ summary: 'List experiments', query: PAGE_SCHEMA }), listRoute(deps.publicUrl, experiments, show));

  router.post(
    '/',
    requireScopes('experiment:write'),
    documented({ summary: 'Create an experiment (and its flag with control and test variants, unless the project has a multivariate flag of feature_flag_key the caller may change)', body: createSchema }),
    async (req, res) => {
      const { feature_flag_key, ...fields } = validateBody<ExperimentFields & { feature_flag_key: string }>(createSchema, req);
      const existing = await deps.flags.getByKey(projectOf(req).id, feature_flag_key);
      if (existing) await linked.require(req, existing.id, 'editor', { attr: 'feature_flag_key' });
      res.status(201).json(await show(req, await service.create(projectOf(req).id, fields, feature_flag_key, principalOf(req).userId)));
    },
  );

  router.get('/:id', requireScopes('experiment:read'), documented({ summary: 'Retrieve an experiment' }), async (req, res) => {
    res.json(await show(req, await get(req)));
  });

  router.patch('/:id', requireScopes('experiment:write'), documented({ summary: 'Update an experiment (a start_date launches it and turns its flag on)', body: patchSchema }), async (req, res) => {
    const changes = validateBody<Partial<ExperimentFields> & { feature_flag_key?: string }>(patchSchema, req);
    if ('feature_flag_key' in (req.body ?? {})) throw badRequest("Can't update keys: feature_flag_key is set when the experiment is created.", 'feature_flag_key');
    // A launch turns the flag on: the caller must be one who may change it.
    if (changes.start_date) {
      const row = await get(req);
      if (row.feature_flag) await linked.require(req, row.feature_flag.id, 'editor');
    }
    res.json(await show(req, await service.update(projectOf(req).id, experimentId(req), changes)));
  });

  router.delete('/:id', requireScopes('experiment:write'), documented({ summary: 'Delete an experiment (its flag stays)' }), async (req, res) => {
    await service.delete(projectOf(req).id, experimentId(req));
    res.status(204).end();
  });

  router.get(
    '/:id/results',
    requireScopes('experiment:read'),
    documented({ summary: "One metric's results, as the query endpoint answers its ExperimentTrendsQuery or ExperimentFunnelsQuery with this experiment_id", query: resultsQuery }),
    async (req, res) => {
      const { metric_index, secondary } = validateQuery<{ metric_index: number; secondary: boolean }>(resultsQuery, req);
      const row = await get(req);
      const list = secondary ? row.metrics_secondary : row.metrics;
      const metric = list[metric_index];
      if (!metric) throw badRequest(`The experiment has no ${secondary ? 'secondary ' : ''}metric at index ${metric_index}.`, 'metric_index');
      res.json(await deps.query.run(projectOf(req), { ...metric, experiment_id: row.id }, clientSignal(res)));
    },
  );

  return router;
}
