import { Router } from 'express';
import { PAGE_SCHEMA, documented, notFound, pageOf } from '@tributary/http';
import { principalOf, requireScopes } from '../auth/authenticate.js';
import { pageLinks } from '../http/responses.js';
import { isUuid } from '../http/uuid.js';
import { OrganizationMemberStore, type OrganizationMemberRow } from './organization-member-store.js';
import { presentUser } from './organization-user.js';

function presentMember(row: OrganizationMemberRow) {
  return { id: row.id, level: row.level, joined_at: row.joined_at.toISOString(), updated_at: row.updated_at.toISOString(), user: presentUser(row) };
}

/** `/api/organizations/:organization_id/members/`, where `@current` names the caller's organization. */
export function organizationRoutes(deps: { members: OrganizationMemberStore; publicUrl: string }): Router {
  const router = Router();
  const { members } = deps;

  router.get('/:organization_id/members', requireScopes('organization_member:read'), documented({ summary: 'List an organization’s members', query: PAGE_SCHEMA }), async (req, res) => {
    const { key, userId } = principalOf(req);
    const raw = String(req.params.organization_id);
    const organizationId = raw === '@current' ? await members.currentOrganizationId(userId, key.scoped_projects) : raw;
    // An organization the caller is not in answers as if it did not exist, so ids cannot be probed.
    if (!organizationId || !isUuid(organizationId) || !(await members.canSee(organizationId, userId, key.scoped_projects))) {
      throw notFound(`Organization ${raw} does not exist.`);
    }
    const page = pageOf(req);
    const { count, results } = await members.list(organizationId, page.limit, page.offset);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map(presentMember) });
  });
  return router;
}
