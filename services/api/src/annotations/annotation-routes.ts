import { Router, type Request } from 'express';
import { PAGE_PROPERTIES, badRequest, bodySchemas, documented, methodNotAllowed, notFound, validateBody, validateQuery } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { idParam } from '../http/id-param.js';
import { pageLinks } from '../http/responses.js';
import { presentUser, type UserColumns } from '../organizations/organization-user.js';
import { ANNOTATION_SCOPES, CREATION_TYPES, type AnnotationInput, type AnnotationRow, type AnnotationStore } from './annotation-store.js';

const rowId = { type: ['integer', 'null'], minimum: 1, maximum: 2_147_483_647 } as const;

const { create: createSchema, patch: patchSchema } = bodySchemas(
  {
    content: { type: 'string', maxLength: 8192 },
    date_marker: { type: ['string', 'null'], maxLength: 64 },
    creation_type: { enum: CREATION_TYPES },
    scope: { enum: ANNOTATION_SCOPES },
    dashboard_item: rowId,
    dashboard_id: rowId,
    deleted: { type: 'boolean' },
  },
  { defaults: { content: '', date_marker: null, creation_type: 'USR', scope: 'dashboard_item', dashboard_item: null, dashboard_id: null, deleted: false } },
);

// PostHog's default page is 1000 annotations, the whole of most projects' timelines.
const listSchema = { type: 'object', properties: { ...PAGE_PROPERTIES, limit: { ...PAGE_PROPERTIES.limit, default: 1000 }, search: { type: 'string', maxLength: 400 } } } as const;

interface AnnotationBody {
  content: string;
  date_marker: string | null;
  creation_type: AnnotationInput['creation_type'];
  scope: AnnotationInput['scope'];
  dashboard_item: number | null;
  dashboard_id: number | null;
  deleted: boolean;
}

function present(row: AnnotationRow) {
  return {
    id: row.id,
    content: row.content,
    date_marker: row.date_marker?.toISOString() ?? null,
    creation_type: row.creation_type,
    dashboard_item: row.insight_id,
    dashboard_id: row.dashboard_id,
    dashboard_name: row.dashboard_name,
    insight_short_id: row.insight_short_id,
    insight_name: row.insight_name,
    // PostHog derives a name from an unnamed insight's query; Tributary keeps no derived name.
    insight_derived_name: null,
    created_by: row.user_id == null ? null : presentUser(row as UserColumns),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    deleted: row.deleted,
    scope: row.scope,
  };
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;

/** An ISO 8601 date (and time) of a real day: JavaScript alone would roll Feb 30 over to March. */
function isIsoDate(text: string): boolean {
  if (!ISO_DATE.test(text) || Number.isNaN(Date.parse(text))) return false;
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  // Postgres has no year 0, which an early date with an offset can fall into.
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day && new Date(text).getUTCFullYear() >= 1;
}

const annotationId = (req: Request) => idParam(req, 'Annotation');

/**
 * `/api/projects/:project_id/annotations/`: notes on a date, shown on an insight, a dashboard, the
 * project or the whole organization. Deleting is a PATCH of `deleted`, as PostHog's.
 */
export function annotationRoutes(deps: { annotations: AnnotationStore; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const { annotations } = deps;

  /** A date Postgres reads the same way; the insight and dashboard named are the project's own (`teamId`, the annotation's project). */
  async function check(teamId: number, body: Partial<AnnotationBody>): Promise<void> {
    if (typeof body.date_marker === 'string' && !isIsoDate(body.date_marker)) throw badRequest('date_marker must be an ISO 8601 date and time.', 'date_marker');
    if (body.dashboard_item != null && !(await annotations.hasInsight(teamId, body.dashboard_item))) {
      throw badRequest(`Invalid pk "${body.dashboard_item}" - object does not exist.`, 'dashboard_item', 'does_not_exist');
    }
    if (body.dashboard_id != null && !(await annotations.hasDashboard(teamId, body.dashboard_id))) {
      throw badRequest(`Invalid pk "${body.dashboard_id}" - object does not exist.`, 'dashboard_id', 'does_not_exist');
    }
  }

  const input = (body: Partial<AnnotationBody>): Partial<AnnotationInput> => ({
    content: body.content,
    date_marker: typeof body.date_marker === 'string' ? new Date(body.date_marker).toISOString() : body.date_marker,
    creation_type: body.creation_type,
    scope: body.scope,
    insight_id: body.dashboard_item,
    dashboard_id: body.dashboard_id,
    deleted: body.deleted,
  });

  router.get('/', requireScopes('annotation:read'), documented({ summary: 'List annotations', query: listSchema }), async (req, res) => {
    const query = validateQuery<{ limit: number; offset: number; search?: string }>(listSchema, req);
    const { count, results } = await annotations.list(projectOf(req), query);
    res.json({ count, ...pageLinks(deps.publicUrl, req, query, count), results: results.map(present) });
  });

  router.post('/', requireScopes('annotation:write'), documented({ summary: 'Create an annotation', body: createSchema }), async (req, res) => {
    const body = validateBody<AnnotationBody>(createSchema, req);
    const project = projectOf(req);
    await check(project.id, body);
    const created = await annotations.create(project, input(body) as AnnotationInput, principalOf(req).userId);
    res.status(201).json(present(created));
  });

  router.get('/:id', requireScopes('annotation:read'), documented({ summary: 'Retrieve an annotation' }), async (req, res) => {
    const row = await annotations.get(projectOf(req), annotationId(req));
    if (!row) throw notFound(`Annotation ${req.params.id} does not exist.`);
    res.json(present(row));
  });

  router.patch('/:id', requireScopes('annotation:write'), documented({ summary: 'Update, delete (deleted: true) or restore an annotation', body: patchSchema }), async (req, res) => {
    const body = validateBody<Partial<AnnotationBody>>(patchSchema, req);
    const project = projectOf(req);
    const id = annotationId(req);
    const existing = await annotations.get(project, id, true);
    if (!existing) throw notFound(`Annotation ${req.params.id} does not exist.`);
    await check(existing.team_id, body);
    const updated = await annotations.update(project, id, input(body));
    if (!updated) throw notFound(`Annotation ${req.params.id} does not exist.`);
    res.json(present(updated));
  });

  // As PostHog's: annotations are kept, and deleted by a PATCH of `deleted`, which can be undone.
  router.delete('/:id', requireScopes('annotation:write'), documented({ summary: 'Not allowed: PATCH deleted: true instead' }), () => {
    throw methodNotAllowed('DELETE', ['GET', 'PATCH']);
  });
  return router;
}
