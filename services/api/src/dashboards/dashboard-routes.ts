import { Router, type Request, type Response } from 'express';
import pLimit from 'p-limit';
import { PAGE_SCHEMA, badRequest, documented, forbidden, notFound, pageOf } from '@tributary/http';
import { accessControlRoutes } from '../access-controls/access-control-routes.js';
import type { AccessControls } from '../access-controls/access-controls.js';
import type { AccessLevel } from '@tributary/auth';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { clientSignal, pageLinks } from '../http/responses.js';
import type { OrganizationMemberStore } from '../organizations/organization-member-store.js';
import { presentUser, type UserColumns } from '../organizations/organization-user.js';
import { normaliseTags } from '../http/tags.js';
import { tileResult } from '../insights/insight-results.js';
import { InsightAccess } from '../insights/insight-access.js';
import { presentInsight } from '../insights/insight-routes.js';
import { InsightStore } from '../insights/insight-store.js';
import { refreshMode, type RefreshMode } from '../query/insight-cache.js';
import type { QueryService } from '../query/query-service.js';
import { createDashboardSchema, parseCreateBody, parsePatchBody, patchDashboardSchema } from './dashboard-requests.js';
import { asProtected } from './dashboard-access.js';
import { DashboardStore, type DashboardRow } from './dashboard-store.js';
import { idParam } from '../http/id-param.js';

function presentDashboard(row: DashboardRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    pinned: row.pinned,
    deleted: row.deleted,
    creation_mode: row.creation_mode,
    filters: row.filters,
    tags: row.tags,
    restriction_level: row.restriction_level,
    effective_restriction_level: row.restriction_level,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.user_id == null ? null : presentUser(row as UserColumns),
  };
}


/**
 * `/dashboards/`: dashboards, empty, from a built-in template (`use_template`), from template
 * JSON, or copied from another, behind access controls. A dashboard read answers every tile's
 * insight with its results, computing those not fresh in the cache (`refresh=blocking`, the default).
 */
export function dashboardRoutes(deps: {
  dashboards: DashboardStore;
  insights: InsightStore;
  insightAccess: InsightAccess;
  publicUrl: string;
  access: AccessControls;
  members: OrganizationMemberStore;
  queries: QueryService;
  /** Tiles one read computes at once (DASHBOARD_TILE_CONCURRENCY). */
  tileConcurrency: number;
}): Router {
  const router = Router({ mergeParams: true });
  const { dashboards, insights, insightAccess, access } = deps;

  /** The live dashboard, if the caller has at least `needed` access to it. */
  const reachable = async (req: Request, id: number, needed: 'viewer' | 'editor'): Promise<{ row: DashboardRow; level: AccessLevel }> => {
    const row = await dashboards.get(projectOf(req).id, id);
    if (!row) throw notFound(`Dashboard ${id} does not exist.`);
    return { row, level: await access.require(req, 'dashboard', asProtected(row), needed, 'Dashboard') };
  };

  /** The dashboard with its tiles; each tile's insight with its results by `refresh` (none when not given). */
  const full = async (req: Request, res: Response, row: DashboardRow, level: AccessLevel, refresh?: RefreshMode) => {
    const tiles = await dashboards.tiles(row.id);
    const byId = await insights.getMany(row.team_id, tiles.map((t) => t.insight_id));
    const signal = clientSignal(res);
    // A few tiles at once, not all: each takes one of the project's query slots, which are for
    // people as much as for one dashboard.
    const limit = pLimit(deps.tileConcurrency);
    const present = async (tile: (typeof tiles)[number]) => {
      const insight = byId.get(tile.insight_id)!;
      const results = refresh ? await tileResult(deps.queries, projectOf(req), insight.query, refresh, signal) : undefined;
      return {
        id: tile.id,
        layouts: tile.layouts,
        color: tile.color,
        text: null,
        deleted: false,
        is_cached: results?.is_cached ?? false,
        last_refresh: results?.last_refresh ?? null,
        insight: presentInsight(await insightAccess.view(req, insight), results),
      };
    };
    const presented = await Promise.all(tiles.map((tile) => limit(() => present(tile)))).catch((error: unknown) => {
      // A tile that fails the read (a 5xx): the tiles still queued are not started.
      limit.clearQueue();
      throw error;
    });
    return { ...presentDashboard(row), user_access_level: level, tiles: presented };
  };

  router.get('/', requireScopes('dashboard:read'), documented({ summary: 'List dashboards', query: PAGE_SCHEMA }), async (req, res) => {
    const page = pageOf(req);
    const { count, results } = await dashboards.list(projectOf(req).id, page.limit, page.offset, await access.hidden(req, 'dashboard'));
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map(presentDashboard) });
  });

  const create = async (req: Request, res: Response, needsSource: boolean) => {
    const body = parseCreateBody(req.body, needsSource);
    const teamId = projectOf(req).id;
    const userId = principalOf(req).userId;
    const { template } = body;
    // The copied dashboard, when there is no template to take the defaults from.
    const source = body.use_dashboard === undefined ? null : await dashboards.get(teamId, body.use_dashboard);
    if (body.use_dashboard !== undefined && (!source || (await access.levelOf(req, 'dashboard', asProtected(source))) === 'none')) {
      throw badRequest(`Dashboard ${body.use_dashboard} does not exist.`, 'use_dashboard');
    }
    const origin = template
      ? { name: template.template_name, description: template.dashboard_description, filters: template.dashboard_filters, tags: template.tags }
      : (source ?? { name: 'New dashboard', description: '', filters: {}, tags: [] });
    const fields = {
      name: body.name ?? origin.name,
      description: body.description ?? origin.description,
      pinned: body.pinned,
      filters: origin.filters,
      tags: normaliseTags(body.tags ?? origin.tags),
      restriction_level: body.restriction_level,
    };
    const created = source ? await dashboards.duplicate(teamId, fields, source.id, userId) : await dashboards.createFromTemplate(teamId, fields, template?.tiles ?? null, userId);
    return full(req, res, created, 'editor');
  };

  router.post('/', requireScopes('dashboard:write'), documented({ summary: 'Create a dashboard: empty, from a built-in template (use_template), or a copy (use_dashboard)', body: createDashboardSchema }), async (req, res) => {
    res.status(201).json(await create(req, res, false));
  });

  router.post('/create_from_template_json', requireScopes('dashboard:write'), documented({ summary: 'Create a dashboard from a JSON template', body: createDashboardSchema }), async (req, res) => {
    res.status(200).json(await create(req, res, true));
  });

  router.get('/:id', requireScopes('dashboard:read'), documented({ summary: "Retrieve a dashboard with every tile's results (refresh: force_cache, blocking (default), force_blocking)" }), async (req, res) => {
    const { row, level } = await reachable(req, idParam(req, 'Dashboard'), 'viewer');
    res.json(await full(req, res, row, level, refreshMode(req.query.refresh, 'blocking')));
  });

  router.patch('/:id', requireScopes('dashboard:write'), documented({ summary: 'Update a dashboard', body: patchDashboardSchema }), async (req, res) => {
    const id = idParam(req, 'Dashboard');
    const { row, level } = await reachable(req, id, 'editor');
    const body = parsePatchBody(req.body);
    if (body.restriction_level !== undefined && body.restriction_level !== row.restriction_level && !(await access.canManage(req, asProtected(row)))) {
      throw forbidden('Only project admins and the dashboard creator can change its restriction level.');
    }
    const teamId = projectOf(req).id;
    const updated = await dashboards.update(teamId, id, { ...body, tags: body.tags && normaliseTags(body.tags) });
    if (!updated) throw notFound(`Dashboard ${id} does not exist.`);
    if (body.deleted) {
      await dashboards.softDelete(teamId, id, body.delete_insights);
      res.json({ ...(await full(req, res, updated, level)), deleted: true });
      return;
    }
    res.json(await full(req, res, updated, level));
  });

  router.delete('/:id', requireScopes('dashboard:write'), documented({ summary: 'Delete a dashboard' }), async (req, res) => {
    const flag = req.query.delete_insights;
    if (flag !== undefined && flag !== 'true' && flag !== 'false') throw badRequest('delete_insights must be true or false.', 'delete_insights');
    const id = idParam(req, 'Dashboard');
    await reachable(req, id, 'editor');
    if (!(await dashboards.softDelete(projectOf(req).id, id, flag === 'true'))) throw notFound(`Dashboard ${id} does not exist.`);
    res.status(204).end();
  });

  router.use(
    '/:id/access_controls',
    accessControlRoutes(deps, {
      kind: 'dashboard',
      label: 'Dashboard',
      scopes: { read: 'dashboard:read', write: 'dashboard:write' },
      find: async (teamId, id) => {
        const row = await dashboards.get(teamId, id);
        return row && asProtected(row);
      },
    }),
  );
  return router;
}
