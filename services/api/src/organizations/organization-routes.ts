import { Router } from 'express';
import { Ajv } from 'ajv';
import { notFound } from '@tributary/http';
import type { Pool } from '@tributary/postgres';
import { principalOf, requireScopes } from '../auth/authenticate.js';
import { schemaError } from '../cohorts/cohort-filters.js';
import { pageLinks } from '../http/responses.js';
import { OrganizationMemberStore, type OrganizationMemberRow } from './organization-member-store.js';
import { presentUser } from './organization-user.js';

const pageQuery = new Ajv({ useDefaults: true }).compile<{ limit: number; offset: number }>({
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, offset: { type: 'integer', minimum: 0, default: 0 } },
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function presentMember(row: OrganizationMemberRow) {
  return { id: row.id, level: row.level, joined_at: row.joined_at.toISOString(), updated_at: row.updated_at.toISOString(), user: presentUser(row) };
}

/** `/api/organizations/:organization_id/members/`, where `@current` names the caller's organization. */
export function organizationRoutes(deps: { pool: Pool; publicUrl: string }): Router {
  const router = Router();
  const members = new OrganizationMemberStore(deps.pool);

  router.get('/:organization_id/members', requireScopes('organization_member:read'), async (req, res) => {
    const { key, userId } = principalOf(req);
    const raw = String(req.params.organization_id);
    // An organization the caller is not in answers as if it did not exist, so ids cannot be probed.
    const organizationId =
      raw === '@current' ? await members.currentOrganizationId(userId, key.scoped_projects) : UUID.test(raw) && (await members.canSee(raw, userId, key.scoped_projects)) ? raw : null;
    if (!organizationId) throw notFound(`Organization ${raw} does not exist.`);
    const page = { limit: req.query.limit === undefined ? undefined : Number(req.query.limit), offset: req.query.offset === undefined ? undefined : Number(req.query.offset) };
    if (!pageQuery(page)) schemaError(pageQuery.errors);
    const { count, results } = await members.list(organizationId, page.limit, page.offset);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map(presentMember) });
  });
  return router;
}
