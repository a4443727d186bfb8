import { Router, type Request } from 'express';
import { badRequest, bodySchemas, documented, forbidden, notFound, validateBody } from '@tributary/http';
import { projectOf, requireScopes } from '../auth/authenticate.js';
import { isUuid, UUID_PATTERN } from '../http/uuid.js';
import { presentUser } from '../organizations/organization-user.js';
import { AlreadyMemberError, ExplicitMemberStore, LastAdminError, type ExplicitMemberRow } from './explicit-member-store.js';
import type { ProjectRoles } from './project-roles.js';

// Explicit levels stop at admin: ownership is an organization matter.
const level = { type: 'integer', enum: [1, 8] } as const;
const userUuid = { type: 'string', pattern: UUID_PATTERN } as const;
const { create: createSchema, patch: patchSchema } = bodySchemas({ user_uuid: userUuid, level }, { required: ['user_uuid'], defaults: { level: 1 }, patchRequired: ['level'] });

function present(row: ExplicitMemberRow) {
  return {
    id: row.id,
    level: row.level,
    parent_level: row.parent_level,
    parent_membership_id: row.parent_membership_id,
    joined_at: row.joined_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    user: presentUser(row),
    user_uuid: row.user_uuid,
    effective_level: Math.max(row.level, row.parent_level),
  };
}

function memberUuid(req: Request): string {
  const raw = String(req.params.user_uuid);
  if (!isUuid(raw)) throw notFound(`User ${raw} is not an explicit member of this project.`);
  return raw.toLowerCase();
}

/**
 * `/explicit_members/`: raise an organization member's level in one project. Everyone in the
 * project may read the list; only its admins change it, and it always keeps one admin.
 */
export function explicitMemberRoutes(deps: { explicitMembers: ExplicitMemberStore; roles: ProjectRoles }): Router {
  const router = Router({ mergeParams: true });
  const members = deps.explicitMembers;
  const requireAdmin = async (req: Request) => {
    if (!(await deps.roles.of(req)).isAdmin) throw forbidden('Only project admins can add, change or remove explicit members.');
  };

  router.get('/', requireScopes('project:read'), documented({ summary: 'List explicit project members' }), async (req, res) => {
    res.json((await members.list(projectOf(req).id)).map(present));
  });

  router.post('/', requireScopes('project:write'), documented({ summary: 'Add an explicit project member', body: createSchema }), async (req, res) => {
    await requireAdmin(req);
    const body = validateBody<{ user_uuid: string; level: number }>(createSchema, req);
    const project = projectOf(req);
    const parent = await members.organizationMembershipId(project.organization_id, body.user_uuid.toLowerCase());
    if (!parent) throw badRequest(`User ${body.user_uuid} is not a member of the project's organization.`, 'user_uuid');
    try {
      res.status(201).json(present(await members.create(project.id, parent, body.user_uuid.toLowerCase(), body.level)));
    } catch (error) {
      if (error instanceof AlreadyMemberError) throw badRequest(error.message, 'user_uuid', 'unique');
      throw error;
    }
  });

  router.get('/:user_uuid', requireScopes('project:read'), documented({ summary: 'Retrieve an explicit project member' }), async (req, res) => {
    const member = await members.find(projectOf(req).id, memberUuid(req));
    if (!member) throw notFound(`User ${req.params.user_uuid} is not an explicit member of this project.`);
    res.json(present(member));
  });

  router.patch('/:user_uuid', requireScopes('project:write'), documented({ summary: 'Change an explicit member’s level', body: patchSchema }), async (req, res) => {
    await requireAdmin(req);
    const uuid = memberUuid(req);
    const body = validateBody<{ user_uuid?: string; level: number }>(patchSchema, req);
    if (body.user_uuid !== undefined && body.user_uuid.toLowerCase() !== uuid) {
      throw badRequest('A membership cannot move to another user; remove it and add the other user instead.', 'user_uuid');
    }
    try {
      const member = await members.changeLevel(projectOf(req).id, uuid, body.level);
      if (!member) throw notFound(`User ${req.params.user_uuid} is not an explicit member of this project.`);
      res.json(present(member));
    } catch (error) {
      if (error instanceof LastAdminError) throw badRequest(error.message, 'level', 'last_admin');
      throw error;
    }
  });

  router.delete('/:user_uuid', requireScopes('project:write'), documented({ summary: 'Remove an explicit project member' }), async (req, res) => {
    await requireAdmin(req);
    try {
      if (!(await members.remove(projectOf(req).id, memberUuid(req)))) throw notFound(`User ${req.params.user_uuid} is not an explicit member of this project.`);
      res.status(204).end();
    } catch (error) {
      if (error instanceof LastAdminError) throw badRequest(error.message, null, 'last_admin');
      throw error;
    }
  });
  return router;
}
