import { Router, type Request } from 'express';
import { PAGE_PROPERTIES, badRequest, documented, notFound, validateQuery } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { idParam } from '../http/id-param.js';
import { pageLinks } from '../http/responses.js';
import { normaliseTags } from '../http/tags.js';
import { presentUser, type UserColumns } from '../organizations/organization-user.js';
import { createActionSchema, parseActionBody, patchActionSchema } from './action-requests.js';
import type { ActionRow, ActionStore } from './action-store.js';

/** PostHog's `ActionSerializer` fields (those this API keeps; `is_calculating` is never true: actions are matched at query time). */
export function presentAction(row: ActionRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    post_to_slack: row.post_to_slack,
    slack_message_format: row.slack_message_format,
    steps: row.steps,
    created_at: row.created_at.toISOString(),
    created_by: row.user_id == null ? null : presentUser(row as UserColumns),
    deleted: row.deleted,
    is_calculating: false,
    last_calculated_at: row.updated_at.toISOString(),
    team_id: row.team_id,
    is_action: true,
    bytecode_error: null,
    pinned_at: row.pinned_at === null ? null : new Date(row.pinned_at).toISOString(),
    creation_context: null,
  };
}

const LIST_SCHEMA = { type: 'object', properties: { ...PAGE_PROPERTIES, search: { type: 'string', maxLength: 400, default: '' } } } as const;

/**
 * `/actions/`: PostHog's actions, named OR-of-steps conditions over events that insights
 * (`ActionsNode`) and HogQL (`matchesAction`) use. As PostHog's, an action is deleted by
 * `PATCH {deleted: true}`; DELETE is not a method here.
 */
export function actionRoutes(deps: { actions: ActionStore; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const { actions } = deps;
  const actionId = (req: Request) => idParam(req, 'Action');

  const uniqueName = async (teamId: number, name: string | undefined, except?: number) => {
    if (name === undefined) return;
    const existing = await actions.idByName(teamId, name, except);
    if (existing !== null) throw badRequest(`This project already has an action with this name, ID ${existing}`, 'name', 'unique');
  };
  /** The write, or PostHog's 400 when another live action has the name: checked first, and by the unique index when two writes race. */
  const named = async <T>(teamId: number, name: string | undefined, except: number | undefined, write: () => Promise<T>): Promise<T> => {
    await uniqueName(teamId, name, except);
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: string }).code === '23505') await uniqueName(teamId, name, except);
      throw error;
    }
  };

  router.get('/', requireScopes('action:read'), documented({ summary: 'List actions (search: by name)', query: LIST_SCHEMA }), async (req, res) => {
    const { limit, offset, search } = validateQuery<{ limit: number; offset: number; search: string }>(LIST_SCHEMA, req);
    const { count, results } = await actions.list(projectOf(req).id, limit, offset, search);
    res.json({ count, ...pageLinks(deps.publicUrl, req, { limit, offset }, count), results: results.map(presentAction) });
  });

  router.post('/', requireScopes('action:write'), documented({ summary: 'Create an action', body: createActionSchema }), async (req, res) => {
    const body = parseActionBody(req.body, true, new Date());
    const teamId = projectOf(req).id;
    const created = await named(teamId, body.name, undefined, () => actions.create(
      teamId,
      {
        name: body.name!,
        description: body.description!,
        tags: normaliseTags(body.tags!),
        steps: body.steps!,
        post_to_slack: body.post_to_slack!,
        slack_message_format: body.slack_message_format!,
        pinned_at: body.pinned_at ?? null,
      },
      principalOf(req).userId,
    ));
    res.status(201).json(presentAction(created));
  });

  router.get('/:id', requireScopes('action:read'), documented({ summary: 'Retrieve an action' }), async (req, res) => {
    const id = actionId(req);
    const row = await actions.get(projectOf(req).id, id);
    if (!row) throw notFound(`Action ${id} does not exist.`);
    res.json(presentAction(row));
  });

  router.patch('/:id', requireScopes('action:write'), documented({ summary: 'Update an action; deleted: true deletes it', body: patchActionSchema }), async (req, res) => {
    const id = actionId(req);
    const teamId = projectOf(req).id;
    const body = parseActionBody(req.body, false, new Date());
    if (!(await actions.get(teamId, id))) throw notFound(`Action ${id} does not exist.`);
    const update = () => actions.update(teamId, id, { ...body, tags: body.tags && normaliseTags(body.tags) });
    // A deleted action frees its name, so deleting needs no check.
    const updated = body.deleted ? await update() : await named(teamId, body.name, id, update);
    if (!updated) throw notFound(`Action ${id} does not exist.`);
    res.json(presentAction(updated));
  });

  return router;
}
