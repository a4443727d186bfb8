import { Router } from 'express';
import { isGrantedScope, missingScopes, type GrantedScope } from '@tributary/auth';
import type { ControlPlaneStore, PersonalApiKeyRecord } from '@tributary/control-plane';
import { badRequest, documented, forbidden, notFound, validateBody } from '@tributary/http';
import { principalOf, requireScopes } from '../auth/authenticate.js';

interface CreateKeyBody {
  label: string;
  scopes: string[];
  scoped_projects?: number[] | null;
}

const createSchema = {
  type: 'object',
  required: ['label', 'scopes'],
  properties: {
    label: { type: 'string', minLength: 1, maxLength: 40 },
    scopes: { type: 'array', minItems: 1, items: { type: 'string' } },
    scoped_projects: { type: 'array', nullable: true, items: { type: 'integer', minimum: 1 } },
  },
};

function present(record: PersonalApiKeyRecord) {
  return {
    id: record.id,
    label: record.label,
    mask_value: record.mask_value,
    scopes: record.scopes,
    scoped_projects: record.scoped_projects,
    created_at: record.created_at.toISOString(),
    last_used_at: record.last_used_at?.toISOString() ?? null,
  };
}

/**
 * A key may only issue keys that can do less than itself, or a leaked narrow key (say, one a CI
 * job holds for reading flags) could mint an unlimited one.
 */
function checkNoEscalation(caller: PersonalApiKeyRecord, scopes: GrantedScope[], scopedProjects: number[] | null): void {
  const beyond = scopes.filter((scope) => (scope === '*' ? !caller.scopes.includes('*') : missingScopes(caller.scopes, [scope]).length > 0));
  if (beyond.length > 0) {
    throw forbidden(`A key cannot grant scopes it does not hold itself: ${beyond.map((s) => `'${s}'`).join(', ')}.`, 'scope_escalation');
  }
  const allowed = caller.scoped_projects;
  if (allowed === null) return;
  if (scopedProjects === null) {
    throw forbidden(`This key is limited to projects ${allowed.join(', ')}; the keys it creates must be limited to some of them too.`, 'scope_escalation');
  }
  const outside = scopedProjects.filter((id) => !allowed.includes(id));
  if (outside.length > 0) throw forbidden(`This key cannot grant access to project${outside.length > 1 ? 's' : ''} ${outside.join(', ')}.`, 'scope_escalation');
}

/** A user's own personal API keys. The value is returned once, on creation. */
export function personalApiKeyRoutes(store: ControlPlaneStore): Router {
  const router = Router();

  router.get('/', requireScopes('personal_api_key:read'), documented({ summary: 'List your personal API keys' }), async (req, res) => {
    res.json((await store.keysOfUser(principalOf(req).userId)).map(present));
  });

  router.post('/', requireScopes('personal_api_key:write'), documented({ summary: 'Create a personal API key (its value is shown once)', body: createSchema }), async (req, res) => {
    const body = validateBody<CreateKeyBody>(createSchema, req);
    const unknown = body.scopes.filter((s) => !isGrantedScope(s));
    if (unknown.length > 0) throw badRequest(`Unknown scopes: ${unknown.join(', ')}.`, 'scopes');
    const { key: caller, userId } = principalOf(req);
    checkNoEscalation(caller, body.scopes as GrantedScope[], body.scoped_projects ?? null);
    if (body.scoped_projects) {
      const reachable = new Set((await store.projectsForUser(userId)).map((p) => p.id));
      const foreign = body.scoped_projects.filter((id) => !reachable.has(id));
      if (foreign.length > 0) throw badRequest(`You cannot limit a key to projects you cannot access: ${foreign.join(', ')}.`, 'scoped_projects');
    }
    const { key, record } = await store.createPersonalApiKey({
      userId,
      label: body.label,
      scopes: body.scopes as GrantedScope[],
      scopedProjects: body.scoped_projects ?? null,
    });
    res.status(201).json({ ...present(record), value: key });
  });

  router.delete('/:id', requireScopes('personal_api_key:write'), documented({ summary: 'Delete a personal API key' }), async (req, res) => {
    if (!(await store.deleteKeyOfUser(principalOf(req).userId, String(req.params.id)))) throw notFound('Personal API key does not exist.');
    res.status(204).end();
  });
  return router;
}
