import { Router, type Request } from 'express';
import { PAGE_SCHEMA, badRequest, documented, notFound, pageOf, validateBody } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { idParam } from '../http/id-param.js';
import { pageLinks } from '../http/responses.js';
import { checkFilterValues, createSchema, patchSchema, type CohortCreateBody, type CohortFilters } from './cohort-filters.js';
import type { CohortRecord, CohortStore } from './cohort-store.js';

export function presentCohort(cohort: CohortRecord) {
  return {
    id: cohort.id,
    name: cohort.name,
    description: cohort.description,
    is_static: cohort.is_static,
    filters: cohort.filters,
    count: cohort.count,
    deleted: cohort.deleted,
    created_by: cohort.created_by,
    created_at: cohort.created_at.toISOString(),
    updated_at: cohort.updated_at.toISOString(),
  };
}

const cohortId = (req: Request) => idParam(req, 'Cohort');

const hasConditions = (filters: CohortFilters | undefined) => (filters?.properties.values ?? []).length > 0;

/**
 * `/api/projects/:project_id/cohorts/`: static cohorts (a list of persons, given by distinct id)
 * and dynamic ones (person-property filters).
 */
export function cohortRoutes(deps: { cohorts: CohortStore; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const { cohorts } = deps;

  router.get('/', requireScopes('cohort:read'), documented({ summary: 'List cohorts', query: PAGE_SCHEMA }), async (req, res) => {
    const page = pageOf(req);
    const { count, results } = await cohorts.list(projectOf(req).id, page.limit, page.offset);
    res.json({
      count,
      ...pageLinks(deps.publicUrl, req, page, count),
      results: results.map(presentCohort),
    });
  });

  router.post('/', requireScopes('cohort:write'), documented({ summary: 'Create a static or dynamic cohort', body: createSchema }), async (req, res) => {
    const body = validateBody<CohortCreateBody>(createSchema, req);
    if (body.is_static) {
      if (hasConditions(body.filters)) throw badRequest('A static cohort is a list of persons: give distinct_ids, not filters.', 'filters');
    } else {
      if (!body.filters) throw badRequest('A dynamic cohort needs filters.properties, the person-property conditions its members match.', 'filters');
      if (body.distinct_ids) throw badRequest('distinct_ids only apply to a static cohort (is_static: true).', 'distinct_ids');
      checkFilterValues(body.filters.properties, new Date());
    }
    const teamId = projectOf(req).id;
    const cohort = await cohorts.create(
      teamId,
      { name: body.name, description: body.description, is_static: body.is_static, filters: body.filters ?? {} },
      body.distinct_ids,
      principalOf(req).userId,
    );
    res.status(201).json(presentCohort(cohort));
  });

  router.get('/:id', requireScopes('cohort:read'), documented({ summary: 'Retrieve a cohort' }), async (req, res) => {
    const cohort = await cohorts.get(projectOf(req).id, cohortId(req));
    if (!cohort) throw notFound(`Cohort ${req.params.id} does not exist.`);
    res.json(presentCohort(cohort));
  });

  router.patch('/:id', requireScopes('cohort:write'), documented({ summary: 'Update a cohort', body: patchSchema }), async (req, res) => {
    const body = validateBody<Partial<CohortCreateBody>>(patchSchema, req);
    const teamId = projectOf(req).id;
    const id = cohortId(req);
    const existing = await cohorts.get(teamId, id);
    if (!existing) throw notFound(`Cohort ${req.params.id} does not exist.`);
    if (body.is_static !== undefined && body.is_static !== existing.is_static) {
      throw badRequest('A cohort cannot change between static and dynamic; create a new cohort instead.', 'is_static');
    }
    if (existing.is_static && hasConditions(body.filters)) throw badRequest('A static cohort is a list of persons: give distinct_ids, not filters.', 'filters');
    if (!existing.is_static && body.distinct_ids) throw badRequest('distinct_ids only apply to a static cohort (is_static: true).', 'distinct_ids');
    if (!existing.is_static && body.filters) checkFilterValues(body.filters.properties, new Date());
    const cohort = await cohorts.update(teamId, id, { name: body.name, description: body.description, filters: body.filters }, body.distinct_ids);
    if (!cohort) throw notFound(`Cohort ${req.params.id} does not exist.`);
    res.json(presentCohort(cohort));
  });

  router.delete('/:id', requireScopes('cohort:write'), documented({ summary: 'Delete a cohort' }), async (req, res) => {
    const teamId = projectOf(req).id;
    if (!(await cohorts.softDelete(teamId, cohortId(req)))) throw notFound(`Cohort ${req.params.id} does not exist.`);
    res.status(204).end();
  });
  return router;
}
