import type { RequestHandler, Request } from 'express';
import { mayReadInstance, type Scope } from '@tributary/auth';
import { personalApiKeyOf, requireKeyScopes, requireProjectAccess } from '@tributary/auth/personal-api-key-access';
import type { ControlPlaneStore, PersonalApiKeyRecord, Project } from '@tributary/control-plane';
import { forbidden, notFound, withDoc } from '@tributary/http';
import { rowId } from '@tributary/postgres/row-id';

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

/** `Authorization: Bearer <personal API key>` is the only credential the management API takes (see personalApiKeyOf). */
export function authenticate(store: Pick<ControlPlaneStore, 'findPersonalApiKey'>): RequestHandler {
  return async (req, res, next) => {
    try {
      const key = await personalApiKeyOf(req.get('authorization'), store);
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
    requireKeyScopes(principalOf(req).key, required);
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
      const id = rowId(raw);
      const project = id === null ? null : await store.findProject(id);
      if (!project) throw notFound(`Project ${raw} does not exist.`);
      await requireProjectAccess(principalOf(req).key, project.id, store);
      res.locals.project = project;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Installation-wide routes (every project's figures): an instance operator's unlimited key only.
 * The flag is on the user and set by the CLI, so no key or organization role grants it.
 */
export function requireInstanceOperator(store: Pick<ControlPlaneStore, 'isInstanceOperator'>): RequestHandler {
  return withDoc(async (req, _res, next) => {
    try {
      const { key, userId } = principalOf(req);
      if (!mayReadInstance(key, await store.isInstanceOperator(userId))) {
        throw forbidden('This covers every project of the installation: it needs an instance operator (tributary users:operator) and their key with all scopes (*) and no project restriction.', 'instance_operator_required');
      }
      next();
    } catch (error) {
      next(error);
    }
  }, { scopes: ['*'], access: 'instance operator' });
}
