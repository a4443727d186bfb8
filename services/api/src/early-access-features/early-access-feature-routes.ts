import { Router, type Request } from 'express';
import type { FeatureFlagStore } from '@tributary/control-plane';
import { PAGE_SCHEMA, documented, notFound, pageOf, validateBody } from '@tributary/http';
import type { Pool } from '@tributary/postgres';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { pageLinks } from '../http/responses.js';
import { isUuid } from '../http/uuid.js';
import { EarlyAccessFeatureService } from './early-access-feature-service.js';
import { EarlyAccessFeatureStore, STAGES, type EarlyAccessFeatureFields, type EarlyAccessFeatureRow } from './early-access-feature-store.js';

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 10_000 },
  stage: { enum: STAGES },
  documentation_url: { type: 'string', maxLength: 800, pattern: '^(https?://\\S+)?$', description: 'must be an http(s) URL or empty' },
} as const;

const createSchema = {
  type: 'object',
  required: ['name', 'stage'],
  properties: {
    ...fields,
    description: { ...fields.description, default: '' },
    documentation_url: { ...fields.documentation_url, default: '' },
    feature_flag_id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  },
};
const patchSchema = { type: 'object', properties: fields };

/** A feature as PostHog's EarlyAccessFeatureSerializer answers it. */
export function presentEarlyAccessFeature(row: EarlyAccessFeatureRow) {
  return {
    id: row.id,
    feature_flag: row.feature_flag,
    name: row.name,
    description: row.description,
    stage: row.stage,
    documentation_url: row.documentation_url,
    created_at: row.created_at.toISOString(),
  };
}

function featureId(req: Request): string {
  const raw = String(req.params.id);
  if (!isUuid(raw)) throw notFound(`Early access feature ${raw} does not exist.`);
  return raw;
}

/** `/early_access_features/`: PostHog's features in preview, each with the flag persons enroll in. */
export function earlyAccessFeatureRoutes(deps: { pool: Pool; flags: FeatureFlagStore; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const features = new EarlyAccessFeatureStore(deps.pool);
  const service = new EarlyAccessFeatureService({ features, flags: deps.flags });

  router.get('/', requireScopes('early_access_feature:read'), documented({ summary: 'List early access features', query: PAGE_SCHEMA }), async (req, res) => {
    const page = pageOf(req);
    const { count, results } = await features.list(projectOf(req).id, page.limit, page.offset);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map(presentEarlyAccessFeature) });
  });

  router.post(
    '/',
    requireScopes('early_access_feature:write'),
    documented({ summary: 'Create an early access feature (and its flag, unless feature_flag_id names one)', body: createSchema }),
    async (req, res) => {
      const { feature_flag_id, ...body } = validateBody<EarlyAccessFeatureFields & { feature_flag_id?: number }>(createSchema, req);
      const row = await service.create(projectOf(req).id, body, feature_flag_id, principalOf(req).userId);
      res.status(201).json(presentEarlyAccessFeature(row));
    },
  );

  router.get('/:id', requireScopes('early_access_feature:read'), documented({ summary: 'Retrieve an early access feature' }), async (req, res) => {
    const row = await features.get(projectOf(req).id, featureId(req));
    if (!row) throw notFound(`Early access feature ${req.params.id} does not exist.`);
    res.json(presentEarlyAccessFeature(row));
  });

  router.patch('/:id', requireScopes('early_access_feature:write'), documented({ summary: 'Update an early access feature', body: patchSchema }), async (req, res) => {
    const changes = validateBody<Partial<EarlyAccessFeatureFields>>(patchSchema, req);
    res.json(presentEarlyAccessFeature(await service.update(projectOf(req).id, featureId(req), changes)));
  });

  router.delete('/:id', requireScopes('early_access_feature:write'), documented({ summary: 'Delete an early access feature (its flag stays)' }), async (req, res) => {
    await service.delete(projectOf(req).id, featureId(req));
    res.status(204).end();
  });

  return router;
}
