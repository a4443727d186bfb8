import { Router, type RequestHandler } from 'express';
import type { PersonalApiKeyRecord } from '@tributary/control-plane';
import { documented, forbidden, withDoc } from '@tributary/http';
import { principalOf, requireScopes } from '../auth/authenticate.js';

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

const SESSION_ONLY =
  'A personal API key can only read itself (GET /api/personal_api_keys/@current/); listing, issuing and revoking keys is done with the CLI (tributary keys:create, keys:list, keys:revoke).';

/**
 * PostHog's rule: a request authenticated by a personal API key may only read that key; managing
 * keys needs the user's session. Tributary has no sessions, so those routes always answer 403 and
 * the CLI, which holds the database, manages keys instead.
 */
const needsSession: RequestHandler = withDoc((_req, _res, next) => next(forbidden(SESSION_ONLY, 'session_required')), { access: 'session only: refused to personal API keys' });

/** Lets through a request whose `:id` names its own key (or is `@current`); 403 for any other key. */
const onlyTheKeyItself: RequestHandler = withDoc((req, _res, next) => {
  const id = req.params.id;
  next(id === '@current' || id === principalOf(req).key.id ? undefined : forbidden(SESSION_ONLY, 'session_required'));
}, { access: 'the key itself' });

/** `/api/personal_api_keys/`: what a key may learn about itself. */
export function personalApiKeyRoutes(): Router {
  const router = Router();
  router.get('/', needsSession, documented({ summary: "List your personal API keys (a session's; refused to personal API keys)" }));
  router.post('/', needsSession, documented({ summary: "Create a personal API key (a session's; refused to personal API keys: use tributary keys:create)" }));
  router.get('/:id', requireScopes('personal_api_key:read'), onlyTheKeyItself, documented({ summary: 'Retrieve the key this request carries (its id or @current)' }), (req, res) => {
    res.json(present(principalOf(req).key));
  });
  router.delete('/:id', needsSession, documented({ summary: "Delete a personal API key (a session's; refused to personal API keys: use tributary keys:revoke)" }));
  return router;
}
