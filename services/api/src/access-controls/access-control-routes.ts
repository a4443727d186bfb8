import { Router, type Request } from 'express';
import { badRequest, documented, forbidden, notFound, validateBody } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { idParam } from '../http/id-param.js';
import { UUID_PATTERN } from '../http/uuid.js';
import type { OrganizationMemberStore } from '../organizations/organization-member-store.js';
import type { AccessControlRow, ResourceKind } from './access-control-store.js';
import type { AccessControls, ProtectedResource } from './access-controls.js';
import { ACCESS_LEVELS, type AccessLevel, type Scope } from '@tributary/auth';

/** What a resource's routes tell the mixin about themselves. */
export interface AccessControlledResource {
  kind: ResourceKind;
  /** Capitalised name for messages, such as "Dashboard". */
  label: string;
  scopes: { read: Scope; write: Scope };
  /** The live resource, or null. */
  find(teamId: number, id: number): Promise<ProtectedResource | null>;
}

const putSchema = {
  type: 'object',
  required: ['access_level'],
  properties: {
    access_level: { type: 'string', nullable: true, enum: [...ACCESS_LEVELS, null] },
    organization_member: { type: 'string', nullable: true, pattern: UUID_PATTERN },
  },
};

function presentEntry(row: AccessControlRow) {
  return {
    id: row.id,
    resource: row.resource,
    resource_id: row.resource_id,
    organization_member: row.organization_member,
    access_level: row.access_level,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * PostHog's access-control mixin: mount at `/:id/access_controls` on any resource router to
 * list (GET) and set (PUT) who may view or edit one resource.
 */
export function accessControlRoutes(deps: { access: AccessControls; members: OrganizationMemberStore }, resource: AccessControlledResource): Router {
  const router = Router({ mergeParams: true });
  const { access } = deps;

  const visible = async (req: Request): Promise<ProtectedResource> => {
    const found = await resource.find(projectOf(req).id, idParam(req, resource.label));
    if (!found) throw notFound(`${resource.label} ${req.params.id} does not exist.`);
    await access.require(req, resource.kind, found, 'viewer', resource.label);
    return found;
  };

  const document = async (req: Request, found: ProtectedResource) => {
    const entries = await access.store.list(projectOf(req).id, resource.kind, found.id);
    return {
      access_controls: entries.map(presentEntry),
      available_access_levels: ACCESS_LEVELS,
      default_access_level: entries.find((e) => e.organization_member === null)?.access_level ?? 'editor',
      user_access_level: await access.levelOf(req, resource.kind, found),
      user_can_edit_access_levels: await access.canManage(req, found),
    };
  };

  router.get('/', requireScopes(resource.scopes.read), documented({ summary: 'Access controls of this resource' }), async (req, res) => {
    res.json(await document(req, await visible(req)));
  });

  router.put('/', requireScopes(resource.scopes.write), documented({ summary: 'Set an access level for the project or one member', body: putSchema }), async (req, res) => {
    const found = await visible(req);
    if (!(await access.canManage(req, found))) throw forbidden(`Only project admins and its creator can change who may use ${resource.label.toLowerCase()} ${found.id}.`);
    const body = validateBody<{ access_level: AccessLevel | null; organization_member?: string | null }>(putSchema, req);
    const project = projectOf(req);
    const member = body.organization_member?.toLowerCase() ?? null;
    if (member !== null && !(await deps.members.find(project.organization_id, member))) {
      throw badRequest(`${body.organization_member} is not a membership of the project's organization.`, 'organization_member');
    }
    await access.store.set(project.id, resource.kind, found.id, member, body.access_level, principalOf(req).userId);
    res.json(await document(req, found));
  });
  return router;
}
