import { Router, type Request } from 'express';
import { badRequest, documented, notFound, validateBody, validateQuery } from '@tributary/http';
import { projectOf, requireScopes } from '../auth/authenticate.js';
import { pageUrl } from '../http/responses.js';
import type { GroupCursor, GroupRecord, GroupStore, GroupTypeNames } from './group-store.js';

/** A project has at most five group types, indexed 0 to 4 (ingest's MAX_GROUP_TYPES). */
const groupTypeIndex = { type: 'integer', minimum: 0, maximum: 4 } as const;
const TYPE_INDEX_REQUIRED = 'You must pass ?group_type_index= in this URL. To get a list of valid group types, call /api/projects/:project_id/groups_types/.';

const listSchema = {
  type: 'object',
  properties: {
    group_type_index: groupTypeIndex,
    search: { type: 'string', maxLength: 400 },
    cursor: { type: 'string', maxLength: 1000 },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  },
} as const;
const findSchema = { type: 'object', required: ['group_type_index', 'group_key'], properties: { group_type_index: groupTypeIndex, group_key: { type: 'string', maxLength: 400 } } } as const;
const valuesSchema = {
  type: 'object',
  required: ['group_type_index', 'key'],
  properties: { group_type_index: groupTypeIndex, key: { type: 'string', minLength: 1, maxLength: 400 }, value: { type: 'string', maxLength: 400 } },
} as const;
const name = { type: ['string', 'null'], maxLength: 400 } as const;
const metadataSchema = {
  type: 'array',
  maxItems: 5,
  items: { type: 'object', required: ['group_type_index'], properties: { group_type_index: groupTypeIndex, name_singular: name, name_plural: name } },
};

interface ListQuery {
  group_type_index?: number;
  search?: string;
  cursor?: string;
  limit: number;
}

function present(group: GroupRecord) {
  return { group_type_index: group.group_type_index, group_key: group.group_key, group_properties: group.group_properties, created_at: group.created_at.toISOString() };
}

const encodeCursor = (group: GroupRecord) => Buffer.from(JSON.stringify({ created_at: group.created_at.toISOString(), group_key: group.group_key })).toString('base64url');

/** A time as this list writes it, which Postgres reads (it has no year 0). */
const isCursorTime = (text: string) => Date.parse(text) >= Date.parse('0001-01-01T00:00:00Z') && new Date(text).toISOString() === text;

/** A cursor this list wrote; anything else is PostHog's (DRF's) 404 "Invalid cursor". */
function decodeCursor(raw: string): GroupCursor {
  try {
    const cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<GroupCursor>;
    // Only what this list writes: an ISO time, and a key Postgres can hold.
    if (typeof cursor.group_key === 'string' && cursor.group_key.isWellFormed() && !cursor.group_key.includes('\u0000') && typeof cursor.created_at === 'string' && isCursorTime(cursor.created_at)) {
      return { created_at: cursor.created_at, group_key: cursor.group_key };
    }
  } catch {
    // Falls through to the refusal below.
  }
  throw notFound('Invalid cursor');
}

function cursorUrl(publicUrl: string, req: Request, cursor: string): string {
  const url = new URL(pageUrl(publicUrl, req, 0, 0));
  url.searchParams.delete('offset');
  url.searchParams.delete('limit');
  if (req.query.limit !== undefined) url.searchParams.set('limit', String(req.query.limit));
  url.searchParams.set('cursor', cursor);
  return url.toString();
}

/**
 * `/api/projects/:project_id/groups/`: a project's groups (the accounts of a B2B product), as
 * PostHog lists them: one group type at a time, newest first, a cursor to the next page.
 */
export function groupRoutes(deps: { groups: GroupStore; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const { groups } = deps;

  router.get('/', requireScopes('group:read'), documented({ summary: 'List the groups of one group type', query: listSchema }), async (req, res) => {
    const query = validateQuery<ListQuery>(listSchema, req);
    if (query.group_type_index === undefined) throw badRequest(TYPE_INDEX_REQUIRED, 'group_type_index', 'required');
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const rows = await groups.list(projectOf(req).id, {
      groupTypeIndex: query.group_type_index,
      limit: query.limit + 1,
      ...(query.search !== undefined && { search: query.search }),
      ...(after && { after }),
    });
    const page = rows.slice(0, query.limit);
    res.json({ next: rows.length > query.limit ? cursorUrl(deps.publicUrl, req, encodeCursor(page.at(-1)!)) : null, previous: null, results: page.map(present) });
  });

  router.get('/find', requireScopes('group:read'), documented({ summary: 'Find a group by its type and key', query: findSchema }), async (req, res) => {
    const query = validateQuery<{ group_type_index: number; group_key: string }>(findSchema, req);
    const group = await groups.find(projectOf(req).id, query.group_type_index, query.group_key);
    if (!group) throw notFound();
    // PostHog links a group to its notebook; Tributary has no notebooks.
    res.json({ ...present(group), notebook: null });
  });

  router.get('/property_definitions', requireScopes('group:read'), documented({ summary: "The property names of each group type's groups" }), async (req, res) => {
    const byType: Record<string, { name: string; count: number }[]> = {};
    for (const row of await groups.propertyDefinitions(projectOf(req).id)) (byType[String(row.group_type_index)] ??= []).push({ name: row.name, count: row.count });
    res.json(byType);
  });

  router.get('/property_values', requireScopes('group:read'), documented({ summary: "A group property's most common values", query: valuesSchema }), async (req, res) => {
    const query = validateQuery<{ group_type_index: number; key: string; value?: string }>(valuesSchema, req);
    res.json(await groups.propertyValues(projectOf(req).id, query.group_type_index, query.key, query.value));
  });
  return router;
}

/** `/api/projects/:project_id/groups_types/`: the project's group types and the names its UI gives them. */
export function groupTypeRoutes(deps: { groups: GroupStore }): Router {
  const router = Router({ mergeParams: true });
  const { groups } = deps;

  router.get('/', requireScopes('group:read'), documented({ summary: 'List group types' }), async (req, res) => {
    res.json(await groups.types(projectOf(req).id));
  });

  router.patch('/update_metadata', requireScopes('group:write'), documented({ summary: 'Name group types, singular and plural', body: metadataSchema }), async (req, res) => {
    const changes = validateBody<GroupTypeNames[]>(metadataSchema, req);
    const teamId = projectOf(req).id;
    if (!(await groups.nameTypes(teamId, changes))) throw notFound('Group type not found.');
    res.json(await groups.types(teamId));
  });
  return router;
}
