import type { RequestHandler, Request } from 'express';
import { PERSONAL_API_KEY_PREFIX, PROJECT_API_KEY_PREFIX, missingScopes, type Scope } from '@tributary/auth';
import type { ControlPlaneStore, PersonalApiKeyRecord, Project } from '@tributary/control-plane';
import { forbidden, notFound, unauthorized, withDoc } from '@tributary/http';

export interface Principal {
  key: PersonalApiKeyRecord;
  userId: number;
}

export interface AuthenticatedLocals {
  principal: Principal;
  project: Project;
}

/** The principal and project of a request that passed `authenticate` and `projectAccess`. */
export function principalOf(req: Request): Principal {
  return (req.res!.locals as AuthenticatedLocals).principal;
}

export function projectOf(req: Request): Project {
  return (req.res!.locals as AuthenticatedLocals).project;
}

/** `Authorization: Bearer <personal API key>` is the only credential the management API takes. */
export function authenticate(store: Pick<ControlPlaneStore, 'findPersonalApiKey'>): RequestHandler {
  return async (req, res, next) => {
    try {
      const header = req.get('authorization');
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match) throw unauthorized('Authentication credentials were not provided: send a personal API key as "Authorization: Bearer <key>".', 'not_authenticated');
      const value = match[1]!;
      if (value.startsWith(PROJECT_API_KEY_PREFIX)) {
        throw unauthorized('This is a project API key, which only works for capture and decide; the management API expects a personal API key (phx_...).');
      }
      const key = value.startsWith(PERSONAL_API_KEY_PREFIX) ? await store.findPersonalApiKey(value) : null;
      if (!key) throw unauthorized('Personal API key is invalid or has been deleted.');
      res.locals.principal = { key, userId: key.user_id } satisfies Principal;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** Also names the scopes in the OpenAPI document, so the route's doc cannot disagree with its check. */
export function requireScopes(...required: Scope[]): RequestHandler {
  return withDoc((req, _res, next) => {
    const missing = missingScopes(principalOf(req).key.scopes, required);
    if (missing.length > 0) {
      next(forbidden(`This action requires the scope${missing.length > 1 ? 's' : ''} ${missing.map((s) => `'${s}'`).join(', ')}, which this personal API key does not have.`, 'missing_scope'));
      return;
    }
    next();
  }, { scopes: required });
}

/**
 * Resolves `:project_id`: 404 when no such project exists, 403 when the key's user is not in
 * its organization or the key is limited to other projects.
 */
export function projectAccess(store: Pick<ControlPlaneStore, 'findProject' | 'projectsForUser'>): RequestHandler {
  return async (req, res, next) => {
    try {
      const raw = String(req.params.project_id ?? '');
      const id = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
      const project = Number.isNaN(id) ? null : await store.findProject(id);
      if (!project) throw notFound(`Project ${raw} does not exist.`);
      const principal = principalOf(req);
      const reachable = (await store.projectsForUser(principal.userId)).some((p) => p.id === project.id);
      const allowedByKey = principal.key.scoped_projects === null || principal.key.scoped_projects.includes(project.id);
      if (!reachable || !allowedByKey) throw forbidden(`This personal API key cannot access project ${project.id}.`, 'project_forbidden');
      res.locals.project = project;
      next();
    } catch (error) {
      next(error);
    }
  };
}
