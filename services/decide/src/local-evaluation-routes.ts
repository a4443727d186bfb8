import { createHash } from 'node:crypto';
import { Router } from 'express';
import { personalApiKeyOf, requireKeyScopes, requireProjectAccess } from '@tributary/auth/personal-api-key-access';
import type { ControlPlaneStore } from '@tributary/control-plane';
import { unauthorized } from '@tributary/http';
import type { FlagDefinitions } from './flag-definitions.js';

export interface LocalEvaluationDeps {
  store: Pick<ControlPlaneStore, 'findPersonalApiKey' | 'findProjectByToken' | 'projectsForUser'>;
  definitions: Pick<FlagDefinitions, 'forProject'>;
}

/**
 * Local evaluation for server SDKs: the definitions themselves, behind a personal API key checked
 * as the management API checks it, of a user who can reach the project the `token` names.
 */
export function localEvaluationRoutes(deps: LocalEvaluationDeps): Router {
  const router = Router();
  router.get(['/flags/definitions', '/api/feature_flag/local_evaluation'], async (req, res) => {
    const key = await personalApiKeyOf(req.get('authorization'), deps.store);
    requireKeyScopes(key, ['feature_flag:read']);
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const project = token ? await deps.store.findProjectByToken(token) : null;
    if (!project) throw unauthorized('Query parameter token must be a project API key of a project this key can access.', 'invalid_api_key');
    await requireProjectAccess(key, project.id, deps.store);
    const defs = await deps.definitions.forProject(project.id);
    const body = JSON.stringify({
      flags: defs.records.map((r) => ({ id: r.id, team_id: r.team_id, name: r.name, key: r.key, filters: r.filters, deleted: r.deleted, active: r.active, ensure_experience_continuity: r.ensure_experience_continuity, version: r.version })),
      group_type_mapping: Object.fromEntries(Object.entries(defs.groupTypeMapping).map(([i, t]) => [String(i), t])),
      cohorts: req.query.send_cohorts !== undefined ? defs.cohortFilters : {},
    });
    const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
    res.set('ETag', etag);
    if (req.get('if-none-match') === etag) {
      res.status(304).end();
      return;
    }
    res.type('application/json').send(body);
  });
  return router;
}
