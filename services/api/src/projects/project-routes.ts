import { Router, type Request } from 'express';
import type { ControlPlaneStore, Project, ProjectModifiers } from '@tributary/control-plane';
import { DEFAULT_PERSONS_ON_EVENTS_MODE, PERSONS_ON_EVENTS_MODES } from '@tributary/hogql';
import { badRequest, documented, forbidden, notFound, validate } from '@tributary/http';
import { IANAZone } from 'luxon';
import { principalOf, requireScopes } from '../auth/authenticate.js';
import { rowId } from '@tributary/postgres/row-id';

const patchSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA timezone name; insights bucket days, weeks and months in it' },
    event_retention_days: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 36_500,
      description: "Days the project's events are kept: the worker deletes older ones daily (04:00 UTC). Null keeps them.",
    },
    modifiers: {
      type: 'object',
      additionalProperties: false,
      properties: {
        personsOnEventsMode: {
          enum: [...PERSONS_ON_EVENTS_MODES],
          description: `must be one of ${PERSONS_ON_EVENTS_MODES.join(', ')}: where the project's queries take events' persons from`,
        },
      },
      description: "The project's default query modifiers, replaced whole; a query's own modifiers take precedence",
    },
  },
} as const;

/** What a project's queries use where neither it nor the query names a modifier (PostHog's `default_modifiers`). */
const DEFAULT_MODIFIERS: Required<ProjectModifiers> = { personsOnEventsMode: DEFAULT_PERSONS_ON_EVENTS_MODE };

function present(project: Project) {
  return {
    id: project.id,
    uuid: project.uuid,
    organization: project.organization_id,
    name: project.name,
    api_token: project.api_token,
    timezone: project.timezone,
    event_retention_days: project.event_retention_days,
    modifiers: project.modifiers,
    default_modifiers: DEFAULT_MODIFIERS,
    created_at: project.created_at.toISOString(),
  };
}

/** `GET /api/projects/` and `/api/projects/:id/`: how clients discover project ids. */
export function projectRoutes(store: Pick<ControlPlaneStore, 'projectsForUser' | 'findProject' | 'updateProject'>): Router {
  const router = Router();
  const visible = async (userId: number, scopedProjects: number[] | null) =>
    (await store.projectsForUser(userId)).filter((p) => scopedProjects === null || scopedProjects.includes(p.id));

  router.get('/', requireScopes('project:read'), documented({ summary: 'List the projects this key reaches' }), async (req, res) => {
    const { key, userId } = principalOf(req);
    const results = (await visible(userId, key.scoped_projects)).map(present);
    res.json({ count: results.length, next: null, previous: null, results });
  });

  /** The project, if the key reaches it: 404 only when no such project exists, as for every project route; 403 when it exists out of reach. */
  const reachable = async (req: Request): Promise<Project> => {
    const { key, userId } = principalOf(req);
    const raw = String(req.params.id);
    const id = rowId(raw, 'integer') ?? Number.NaN;
    const project = (await visible(userId, key.scoped_projects)).find((p) => p.id === id);
    if (project) return project;
    if (Number.isNaN(id) || !(await store.findProject(id))) throw notFound(`Project ${raw} does not exist.`);
    throw forbidden(`This personal API key cannot access project ${id}.`, 'project_forbidden');
  };

  router.get('/:id', requireScopes('project:read'), documented({ summary: 'Retrieve a project' }), async (req, res) => {
    res.json(present(await reachable(req)));
  });

  router.patch('/:id', requireScopes('project:write'), documented({ summary: "Update a project's name, timezone, event retention or query modifiers", body: patchSchema }), async (req, res) => {
    const project = await reachable(req);
    const body = validate<{ name?: string; timezone?: string; event_retention_days?: number | null; modifiers?: ProjectModifiers }>(patchSchema, req.body ?? {});
    if (body.timezone !== undefined && !IANAZone.isValidZone(body.timezone)) throw badRequest(`timezone must be an IANA timezone name such as Europe/Berlin: ${JSON.stringify(body.timezone)}.`, 'timezone');
    res.json(present((await store.updateProject(project.id, body))!));
  });
  return router;
}
