import type { Request } from 'express';
import { forbidden, notFound } from '@tributary/http';
import type { Pool } from '@tributary/postgres';
import { projectOf } from '../auth/authenticate.js';
import type { ProjectRoles } from '../explicit-members/project-roles.js';
import { AccessControlStore, type ResourceKind } from './access-control-store.js';
import { atLeast, resolveAccessLevel, type AccessLevel } from './access-level.js';

export interface ProtectedResource {
  id: number;
  created_by: number | null;
  /** See `AccessInputs.othersAtMost`; editor when the resource sets no limit. */
  othersAtMost?: AccessLevel;
}

/** Decides what the caller may do with one access-controlled resource. */
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

  /** 404 for a member who may not see the resource, as if it did not exist; 403 for a viewer asked to edit. */
  async require(req: Request, kind: ResourceKind, resource: ProtectedResource, needed: 'viewer' | 'editor', what: string): Promise<AccessLevel> {
    const level = await this.levelOf(req, kind, resource);
    if (level === 'none') throw notFound(`${what} ${resource.id} does not exist.`);
    if (!atLeast(level, needed)) throw forbidden(`You have view access to ${what.toLowerCase()} ${resource.id}, not edit access.`, 'access_level');
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
