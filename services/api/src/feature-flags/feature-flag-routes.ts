import { Router, type Request } from 'express';
import { validateFlagDefinition } from '@tributary/flags';
import { DuplicateFlagKeyError, type FeatureFlagInput, type FeatureFlagRecord, type FeatureFlagStore } from '@tributary/control-plane';
import { PAGE_SCHEMA, badRequest, bodySchemas, documented, notFound, pageOf, validateBody } from '@tributary/http';
import { accessControlRoutes } from '../access-controls/access-control-routes.js';
import type { AccessControls } from '../access-controls/access-controls.js';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { idParam } from '../http/id-param.js';
import { pageLinks } from '../http/responses.js';
import type { OrganizationMemberStore } from '../organizations/organization-member-store.js';

const flagProperties = {
  key: { type: 'string', minLength: 1, maxLength: 400, pattern: '^[A-Za-z0-9_-]+$' },
  name: { type: 'string', maxLength: 2000 },
  filters: { type: 'object' },
  active: { type: 'boolean' },
  ensure_experience_continuity: { type: 'boolean' },
} as const;

const { create: createSchema, patch: patchSchema } = bodySchemas(flagProperties, {
  required: ['key'],
  defaults: { name: '', filters: { groups: [{ properties: [], rollout_percentage: 0 }] }, active: true, ensure_experience_continuity: false },
});

function checkFilters(filters: Record<string, unknown> | undefined): void {
  if (filters === undefined) return;
  const problems = validateFlagDefinition({ filters });
  const first = problems[0];
  if (first) throw badRequest(first.detail, first.attr);
}

export function presentFlag(flag: FeatureFlagRecord) {
  return {
    id: flag.id,
    key: flag.key,
    name: flag.name,
    filters: flag.filters,
    active: flag.active,
    deleted: flag.deleted,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    version: flag.version,
    created_by: flag.created_by,
    created_at: flag.created_at.toISOString(),
    updated_at: flag.updated_at.toISOString(),
  };
}

const flagId = (req: Request) => idParam(req, 'Feature flag');

/**
 * PostHog-shaped flag definitions. Access controls limit who may see and change a flag here,
 * never what decide answers.
 */
export function featureFlagRoutes(deps: { flags: FeatureFlagStore; publicUrl: string; access: AccessControls; members: OrganizationMemberStore }): Router {
  const router = Router({ mergeParams: true });
  /** The live flag, if the caller has at least `needed` access to it. */
  const reachable = async (req: Request, needed: 'viewer' | 'editor'): Promise<FeatureFlagRecord> => {
    const flag = await deps.flags.get(projectOf(req).id, flagId(req));
    if (!flag) throw notFound(`Feature flag ${req.params.id} does not exist.`);
    await deps.access.require(req, 'feature_flag', flag, needed, 'Feature flag');
    return flag;
  };

  router.get('/', requireScopes('feature_flag:read'), documented({ summary: 'List feature flags', query: PAGE_SCHEMA }), async (req, res) => {
    const page = pageOf(req);
    const { count, results } = await deps.flags.list(projectOf(req).id, page.limit, page.offset, await deps.access.hidden(req, 'feature_flag'));
    const { next, previous } = pageLinks(deps.publicUrl, req, page, count);
    res.json({ count, next, previous, results: results.map(presentFlag) });
  });

  router.post('/', requireScopes('feature_flag:write'), documented({ summary: 'Create a feature flag', body: createSchema }), async (req, res) => {
    const body = validateBody<FeatureFlagInput>(createSchema, req);
    checkFilters(body.filters);
    try {
      const flag = await deps.flags.create(projectOf(req).id, body, principalOf(req).userId);
      res.status(201).json(presentFlag(flag));
    } catch (error) {
      if (error instanceof DuplicateFlagKeyError) throw badRequest(error.message, 'key', 'unique');
      throw error;
    }
  });

  router.get('/:id', requireScopes('feature_flag:read'), documented({ summary: 'Retrieve a feature flag' }), async (req, res) => {
    res.json(presentFlag(await reachable(req, 'viewer')));
  });

  router.patch('/:id', requireScopes('feature_flag:write'), documented({ summary: 'Update a feature flag', body: patchSchema }), async (req, res) => {
    const body = validateBody<Partial<FeatureFlagInput>>(patchSchema, req);
    checkFilters(body.filters);
    await reachable(req, 'editor');
    try {
      const flag = await deps.flags.update(projectOf(req).id, flagId(req), body);
      if (!flag) throw notFound(`Feature flag ${req.params.id} does not exist.`);
      res.json(presentFlag(flag));
    } catch (error) {
      if (error instanceof DuplicateFlagKeyError) throw badRequest(error.message, 'key', 'unique');
      throw error;
    }
  });

  router.delete('/:id', requireScopes('feature_flag:write'), documented({ summary: 'Delete a feature flag' }), async (req, res) => {
    const teamId = projectOf(req).id;
    await reachable(req, 'editor');
    if (!(await deps.flags.softDelete(teamId, flagId(req)))) throw notFound(`Feature flag ${req.params.id} does not exist.`);
    res.status(204).end();
  });

  router.use(
    '/:id/access_controls',
    accessControlRoutes(deps, {
      kind: 'feature_flag',
      label: 'Feature flag',
      scopes: { read: 'feature_flag:read', write: 'feature_flag:write' },
      find: (teamId, id) => deps.flags.get(teamId, id),
    }),
  );
  return router;
}
