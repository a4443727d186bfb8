import { Router, type Request, type Response } from 'express';
import { PAGE_PROPERTIES, documented, notFound, validateQuery, type Page } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { clientSignal, pageLinks } from '../http/responses.js';
import { presentUser, type UserColumns } from '../organizations/organization-user.js';
import { refreshMode, type RefreshMode } from '../query/insight-cache.js';
import type { QueryService } from '../query/query-service.js';
import { createInsightSchema, listInsightsSchema, parseCreateInsight, parsePatchInsight, patchInsightSchema } from './insight-requests.js';
import { InsightAccess, type InsightView } from './insight-access.js';
import { insightResult, type InsightResultFields } from './insight-results.js';
import { InsightStore, type InsightRow } from './insight-store.js';
import { idParam } from '../http/id-param.js';

/** A saved insight as PostHog answers it to this caller; `results` when its query was run (or looked up in the cache). */
export function presentInsight({ row, level, restriction }: InsightView, results?: InsightResultFields) {
  return {
    id: row.id,
    short_id: row.short_id,
    name: row.name,
    derived_name: null,
    description: row.description,
    query: row.query,
    filters: row.filters,
    order: null,
    deleted: row.deleted,
    saved: row.saved,
    favorited: row.favorited,
    tags: row.tags,
    dashboards: row.dashboards,
    dashboard_tiles: row.tiles.map((t) => ({ id: t.id, dashboard_id: t.dashboard_id, deleted: false })),
    created_at: row.created_at.toISOString(),
    created_by: row.user_id == null ? null : presentUser(row as UserColumns),
    updated_at: row.updated_at.toISOString(),
    last_modified_at: row.last_modified_at.toISOString(),
    is_sample: false,
    effective_restriction_level: restriction,
    // PostHog's privilege levels: 37 can edit, 21 can view.
    effective_privilege_level: level === 'editor' ? 37 : 21,
    user_access_level: level,
    ...results,
  };
}

const LIST_QUERY = { type: 'object' as const, properties: { ...PAGE_PROPERTIES, ...listInsightsSchema.properties } };

/**
 * `/insights/`: saved queries, PostHog's shape. Reads answer from the cache by default
 * (`refresh=force_cache`); `blocking` computes what is not fresh, `force_blocking` everything.
 * Deleting is a soft delete, as `PATCH {deleted: true}` is.
 */
export function insightRoutes(deps: { insights: InsightStore; insightAccess: InsightAccess; publicUrl: string; queries: QueryService }): Router {
  const router = Router({ mergeParams: true });
  const { insights, insightAccess: access } = deps;

  const withResults = async (req: Request, res: Response, row: InsightRow, refresh: RefreshMode) =>
    presentInsight(await access.view(req, row), await insightResult(deps.queries, projectOf(req), row.query, refresh, clientSignal(res)));

  /** The live insight, when the caller may edit it. */
  const editable = async (req: Request): Promise<InsightRow> => {
    const row = await insights.get(projectOf(req).id, idParam(req, 'Insight'));
    if (!row) throw notFound(`Insight ${req.params.id} does not exist.`);
    await access.requireEdit(req, row);
    return row;
  };

  router.get('/', requireScopes('insight:read'), documented({ summary: 'List saved insights', query: LIST_QUERY }), async (req, res) => {
    const params = validateQuery<Page & { short_id?: string; favorited?: boolean; saved?: boolean; search?: string; basic: boolean; refresh?: string }>(
      LIST_QUERY,
      req,
    );
    const refresh = refreshMode(params.refresh, 'force_cache');
    const filter = { shortId: params.short_id, favorited: params.favorited, saved: params.saved, search: params.search };
    const { count, results } = await insights.list(projectOf(req).id, filter, params.limit, params.offset);
    const page = { limit: params.limit, offset: params.offset };
    const presented = await Promise.all(results.map(async (row) => (params.basic ? presentInsight(await access.view(req, row)) : withResults(req, res, row, refresh))));
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: presented });
  });

  router.post('/', requireScopes('insight:write'), documented({ summary: 'Create a saved insight (on dashboards the caller may edit)', body: createInsightSchema }), async (req, res) => {
    const { dashboards, ...fields } = parseCreateInsight(req.body);
    const placed = await access.placement(req, [], dashboards);
    const row = await insights.create(projectOf(req).id, { ...fields, filters: {} }, placed, principalOf(req).userId);
    res.status(201).json(presentInsight(await access.view(req, row)));
  });

  router.get('/:id', requireScopes('insight:read'), documented({ summary: 'Retrieve a saved insight with its results (refresh: force_cache, blocking, force_blocking)' }), async (req, res) => {
    const row = await insights.get(projectOf(req).id, idParam(req, 'Insight'));
    if (!row) throw notFound(`Insight ${req.params.id} does not exist.`);
    res.json(await withResults(req, res, row, refreshMode(req.query.refresh, 'force_cache')));
  });

  router.patch('/:id', requireScopes('insight:write'), documented({ summary: 'Update a saved insight (deleted: true deletes it); only where the caller may edit it', body: patchInsightSchema }), async (req, res) => {
    const { dashboards, ...changes } = parsePatchInsight(req.body);
    const row = await editable(req);
    const placed = dashboards && (await access.placement(req, row.dashboards, dashboards));
    const updated = await insights.update(row.team_id, row.id, changes, placed, principalOf(req).userId);
    if (!updated) throw notFound(`Insight ${req.params.id} does not exist.`);
    res.json(presentInsight(await access.view(req, updated)));
  });

  router.delete('/:id', requireScopes('insight:write'), documented({ summary: 'Delete a saved insight; only where the caller may edit it' }), async (req, res) => {
    const row = await editable(req);
    if (!(await insights.update(row.team_id, row.id, { deleted: true }, undefined, principalOf(req).userId))) throw notFound(`Insight ${req.params.id} does not exist.`);
    res.status(204).end();
  });

  return router;
}
