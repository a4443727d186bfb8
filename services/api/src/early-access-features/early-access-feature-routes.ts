import { Router, type Request } from 'express';
import { PAGE_SCHEMA, bodySchemas, documented, notFound, validateBody } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { LinkedFlags } from '../feature-flags/linked-flags.js';
import { listRoute } from '../http/list-route.js';
import { uuidParam } from '../http/uuid.js';
import { EarlyAccessFeatureService } from './early-access-feature-service.js';
import { EarlyAccessFeatureStore, STAGES, type EarlyAccessFeatureFields, type EarlyAccessFeatureRow } from './early-access-feature-store.js';

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 10_000 },
  stage: { enum: STAGES },
  documentation_url: { type: 'string', maxLength: 800, pattern: '^(https?://\\S+)?$', description: 'must be an http(s) URL or empty' },
} as const;

const { create: createSchema, patch: patchSchema } = bodySchemas(fields, {
  required: ['name', 'stage'],
  defaults: { description: '', documentation_url: '' },
  createOnly: { feature_flag_id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
});

/** A feature as PostHog's EarlyAccessFeatureSerializer answers it; `flag` is its flag as the caller may see it. */
export function presentEarlyAccessFeature(row: EarlyAccessFeatureRow, flag: EarlyAccessFeatureRow['feature_flag']) {
  return {
    id: row.id,
    feature_flag: flag,
    name: row.name,
    description: row.description,
    stage: row.stage,
    documentation_url: row.documentation_url,
    created_at: row.created_at.toISOString(),
  };
}

const featureId = (req: Request): string => uuidParam(req.params.id, 'Early access feature');

/**
 * `/early_access_features/`: PostHog's features in preview, each with the flag persons enroll in.
 * Attaching a flag, or a change that rewrites its enrollment condition, asks for write on that flag
 * (scope and access control); an answer shows the flag only to whoever may read it.
 */
export function earlyAccessFeatureRoutes(deps: { features: EarlyAccessFeatureStore; featureService: EarlyAccessFeatureService; linkedFlags: LinkedFlags; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const { features, featureService: service, linkedFlags: linked } = deps;
  const present = async (req: Request, row: EarlyAccessFeatureRow) => presentEarlyAccessFeature(row, await linked.visible(req, row.feature_flag));
  /** The live feature's flag must be the caller's to change. */
  const flagWritable = async (req: Request) => {
    const row = await features.get(projectOf(req).id, featureId(req));
    if (row?.feature_flag) await linked.require(req, row.feature_flag.id, 'editor');
  };

  router.get('/', requireScopes('early_access_feature:read'), documented({ summary: 'List early access features', query: PAGE_SCHEMA }), listRoute(deps.publicUrl, features, present));

  router.post(
    '/',
    requireScopes('early_access_feature:write'),
    documented({ summary: 'Create an early access feature (and its flag, unless feature_flag_id names one the caller may change)', body: createSchema }),
    async (req, res) => {
      const { feature_flag_id, ...body } = validateBody<EarlyAccessFeatureFields & { feature_flag_id?: number }>(createSchema, req);
      if (feature_flag_id !== undefined) await linked.require(req, feature_flag_id, 'editor', { attr: 'feature_flag_id' });
      const row = await service.create(projectOf(req).id, body, feature_flag_id, principalOf(req).userId);
      res.status(201).json(await present(req, row));
    },
  );

  router.get('/:id', requireScopes('early_access_feature:read'), documented({ summary: 'Retrieve an early access feature' }), async (req, res) => {
    const row = await features.get(projectOf(req).id, featureId(req));
    if (!row) throw notFound(`Early access feature ${req.params.id} does not exist.`);
    res.json(await present(req, row));
  });

  router.patch('/:id', requireScopes('early_access_feature:write'), documented({ summary: 'Update an early access feature (a new stage needs write on its flag)', body: patchSchema }), async (req, res) => {
    const changes = validateBody<Partial<EarlyAccessFeatureFields>>(patchSchema, req);
    if (changes.stage !== undefined) await flagWritable(req);
    res.json(await present(req, await service.update(projectOf(req).id, featureId(req), changes)));
  });

  router.delete('/:id', requireScopes('early_access_feature:write'), documented({ summary: 'Delete an early access feature (its flag stays, without the enrollment condition; needs write on it)' }), async (req, res) => {
    await flagWritable(req);
    await service.delete(projectOf(req).id, featureId(req));
    res.status(204).end();
  });

  return router;
}
