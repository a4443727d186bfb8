import { Router } from 'express';
import type { ControlPlaneStore, Project } from '@tributary/control-plane';
import { documented, forbidden, notFound } from '@tributary/http';
import { principalOf, requireScopes } from '../auth/authenticate.js';

function present(project: Project) {
  return {
    id: project.id,
    uuid: project.uuid,
    organization: project.organization_id,
    name: project.name,
    api_token: project.api_token,
    created_at: project.created_at.toISOString(),
  };
}

/** `GET /api/projects/` and `/api/projects/:id/`: how clients discover project ids. */
export function projectRoutes(store: Pick<ControlPlaneStore, 'projectsForUser' | 'findProject'>): Router {
  const router = Router();
  const visible = async (userId: number, scopedProjects: number[] | null) =>
    (await store.projectsForUser(userId)).filter((p) => scopedProjects === null || scopedProjects.includes(p.id));

  router.get('/', requireScopes('project:read'), documented({ summary: 'List the projects this key reaches' }), async (req, res) => {
    const { key, userId } = principalOf(req);
    const results = (await visible(userId, key.scoped_projects)).map(present);
    res.json({ count: results.length, next: null, previous: null, results });
  });

  // 404 only when no such project exists, as for every project route; 403 when it exists out of reach.
  router.get('/:id', requireScopes('project:read'), documented({ summary: 'Retrieve a project' }), async (req, res) => {
    const { key, userId } = principalOf(req);
    const raw = String(req.params.id);
    const id = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
    const project = (await visible(userId, key.scoped_projects)).find((p) => p.id === id);
    if (project) {
      res.json(present(project));
      return;
    }
    if (Number.isNaN(id) || !(await store.findProject(id))) throw notFound(`Project ${raw} does not exist.`);
    throw forbidden(`This personal API key cannot access project ${id}.`, 'project_forbidden');
  });
  return router;
}
