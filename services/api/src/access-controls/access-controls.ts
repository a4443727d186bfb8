import type { Request } from 'express';
import { decide, resolveAccessLevel, type AccessLevel, type Verdict } from '@tributary/auth';
import { forbidden, notFound, type HttpError } from '@tributary/http';
import type { Pool } from '@tributary/postgres';
import { principalOf, projectOf } from '../auth/authenticate.js';
import type { ProjectRoles } from '../explicit-members/project-roles.js';
import { AccessControlStore, type ResourceKind } from './access-control-store.js';

export interface ProtectedResource {
  id: number;
  created_by: number | null;
  /** See `AccessInputs.othersAtMost`; editor when the resource sets no limit. */
  othersAtMost?: AccessLevel;
}

export interface RequireOptions {
  /** The object is reached through another whose scope covers it: only its access control is asked. */
  coveredByParent?: boolean;
  /** The answer when the caller may not see it; 404 by default (a body field naming it answers 400). */
  hidden?: () => HttpError;
}

/** The HTTP answer to a refusal of `decide`. */
function refusal(verdict: Exclude<Verdict, { allowed: true }>, what: string, id: number, options: RequireOptions): HttpError {
  switch (verdict.reason) {
    case 'missing_scope':
      return forbidden(`Reaching ${what.toLowerCase()} ${id} requires the scope ${verdict.scopes.map((s) => `'${s}'`).join(', ')}, which this personal API key does not have.`, 'missing_scope');
    case 'hidden':
      return options.hidden?.() ?? notFound(`${what} ${id} does not exist.`);
    case 'view_only':
      return forbidden(`You have view access to ${what.toLowerCase()} ${id}, not edit access.`, 'access_level');
  }
}

/** Decides what the caller may do with one access-controlled resource, by `decide` of @tributary/auth. */
export class AccessControls {
  readonly store: AccessControlStore;

  constructor(
    pool: Pool,
    readonly roles: ProjectRoles,
  ) {
    this.store = new AccessControlStore(pool);
  }

  async levelOf(req: Request, kind: ResourceKind, resource: ProtectedResource): Promise<AccessLevel> {
    const role = await this.roles.of(req);
    const isCreator = resource.created_by === role.userId;
    // Admins and creators edit whatever the entries say, so their requests skip the lookup.
    const entries = role.isAdmin || isCreator ? { memberEntry: null, defaultEntry: null } : await this.store.entriesFor(projectOf(req).id, kind, resource.id, role.membershipId);
    return resolveAccessLevel({ isProjectAdmin: role.isAdmin, isCreator, ...entries, othersAtMost: resource.othersAtMost ?? 'editor' });
  }

  /** Whether the caller may read or write the resource: the key's scope for it and the access level, as `decide` rules. */
  async verdict(req: Request, kind: ResourceKind, resource: ProtectedResource, needed: 'viewer' | 'editor', coveredByParent = false): Promise<{ verdict: Verdict; level: AccessLevel }> {
    const level = await this.levelOf(req, kind, resource);
    return { level, verdict: decide({ scopes: principalOf(req).key.scopes, object: kind, need: needed === 'editor' ? 'write' : 'read', level, coveredByParent }) };
  }

  /** 404 for a member who may not see the resource, as if it did not exist; 403 for a missing scope or a viewer asked to edit. */
  async require(req: Request, kind: ResourceKind, resource: ProtectedResource, needed: 'viewer' | 'editor', what: string, options: RequireOptions = {}): Promise<AccessLevel> {
    const { verdict, level } = await this.verdict(req, kind, resource, needed, options.coveredByParent);
    if (!verdict.allowed) throw refusal(verdict, what, resource.id, options);
    return level;
  }

  /** Admins and the creator decide who else may use a resource. */
  async canManage(req: Request, resource: ProtectedResource): Promise<boolean> {
    const role = await this.roles.of(req);
    return role.isAdmin || resource.created_by === role.userId;
  }

  /** Ids a list must leave out for the caller (creators still see theirs, so lists filter by creator too). */
  async hidden(req: Request, kind: ResourceKind): Promise<{ ids: number[]; exceptCreatedBy: number }> {
    const role = await this.roles.of(req);
    return { ids: role.isAdmin ? [] : await this.store.noAccessIds(projectOf(req).id, kind, role.membershipId), exceptCreatedBy: role.userId };
  }
}
