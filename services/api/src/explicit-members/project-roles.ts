import type { Request } from 'express';
import { forbidden } from '@tributary/http';
import type { Pool } from '@tributary/postgres';
import { principalOf, projectOf } from '../auth/authenticate.js';

/** Organization admins and owners, and explicit project admins, administer a project. */
export const PROJECT_ADMIN_LEVEL = 8;

export interface ProjectRole {
  userId: number;
  membershipId: string;
  /** The higher of the organization level and the explicit project level. */
  effectiveLevel: number;
  isAdmin: boolean;
}

const cache = new WeakMap<Request, Promise<ProjectRole>>();

/** The caller's standing in the request's project, looked up once per request. */
export class ProjectRoles {
  constructor(private readonly pool: Pool) {}

  of(req: Request): Promise<ProjectRole> {
    let role = cache.get(req);
    if (!role) {
      role = this.load(projectOf(req).id, principalOf(req).userId);
      cache.set(req, role);
    }
    return role;
  }

  private async load(teamId: number, userId: number): Promise<ProjectRole> {
    const { rows } = await this.pool.query<{ id: string; effective_level: number }>(
      `SELECT m.id, GREATEST(m.level, COALESCE(e.level, 0))::int AS effective_level
       FROM projects p JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $2
       LEFT JOIN explicit_project_memberships e ON e.parent_membership_id = m.id AND e.team_id = p.id
       WHERE p.id = $1`,
      [teamId, userId],
    );
    const row = rows[0];
    // projectAccess checked the membership; it can only be missing if it was removed since.
    if (!row) throw forbidden(`This personal API key cannot access project ${teamId}.`, 'project_forbidden');
    return { userId, membershipId: row.id, effectiveLevel: row.effective_level, isAdmin: row.effective_level >= PROJECT_ADMIN_LEVEL };
  }
}
