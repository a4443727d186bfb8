import { Router, type Request } from 'express';
import { PAGE_PROPERTIES, PAGE_SCHEMA, badRequest, documented, notFound, pageOf, validate, validateBody, validateQuery, type Page } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { idParam } from '../http/id-param.js';
import { clientSignal, pageLinks, sendCsv } from '../http/responses.js';
import { UUID_PATTERN } from '../http/uuid.js';
import type { CohortFilterGroup } from '@tributary/flags';
import type { ActionStore } from '../actions/action-store.js';
import type { ManagementPersonStore, PersonRecord } from '../persons/management-person-store.js';
import type { QueryService } from '../query/query-service.js';
import { PERSON_FIELDS, presentPerson, regexOfFilters } from '../persons/person-presenter.js';
import { readCohortCsv } from './cohort-csv.js';
import { MAX_CSV_BYTES } from './cohort-csv-upload.js';
import { checkFilterValues, createSchema, patchSchema, readsEvents, type CohortCreateBody, type CohortFilters } from './cohort-filters.js';
import type { CohortRecord, CohortStore, NamedPersons } from './cohort-store.js';

export function presentCohort(cohort: CohortRecord) {
  return {
    id: cohort.id,
    name: cohort.name,
    description: cohort.description,
    is_static: cohort.is_static,
    filters: cohort.filters,
    count: cohort.count,
    is_calculating: cohort.is_calculating,
    last_calculation: cohort.last_calculation?.toISOString() ?? null,
    errors_calculating: cohort.errors_calculating,
    deleted: cohort.deleted,
    created_by: cohort.created_by,
    created_at: cohort.created_at.toISOString(),
    updated_at: cohort.updated_at.toISOString(),
  };
}

const cohortId = (req: Request) => idParam(req, 'Cohort');

/** PostHog's most persons one add_persons_to_static_cohort takes. */
const MAX_PERSONS_PER_ADD = 5000;

const addPersonsSchema = {
  type: 'object',
  required: ['person_ids'],
  properties: { person_ids: { type: 'array', minItems: 1, maxItems: MAX_PERSONS_PER_ADD, items: { type: 'string', pattern: UUID_PATTERN } } },
};
const removePersonSchema = { type: 'object', required: ['person_id'], properties: { person_id: { type: 'string', pattern: UUID_PATTERN } } };
const personsQuery = { type: 'object', properties: { ...PAGE_PROPERTIES, format: { type: 'string', enum: ['json', 'csv'], default: 'json' } } } as const;

/** A form's text fields as the JSON body they stand for: `is_static` comes as text. */
function formBody(fields: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of ['name', 'description', 'is_static'] as const) if (fields[key] !== undefined) body[key] = fields[key];
  if (typeof body.is_static === 'string') body.is_static = ['true', 'True', '1', 'on'].includes(body.is_static) ? true : ['false', 'False', '0', 'off'].includes(body.is_static) ? false : body.is_static;
  return body;
}

/** The request's body: a form's fields read as the JSON body they stand for. */
function bodyOf(req: Request): unknown {
  return req.is('multipart/form-data') ? formBody((req.body ?? {}) as Record<string, unknown>) : structuredClone(req.body ?? {});
}

/** The persons an uploaded CSV (the `csv` field of a form) names, if one came. */
function uploaded(req: Request): NamedPersons | undefined {
  return req.file ? readCohortCsv(req.file.buffer) : undefined;
}

const hasConditions = (filters: CohortFilters | undefined) => (filters?.properties.values ?? []).length > 0;

/**
 * `/api/projects/:project_id/cohorts/`: static cohorts (a list of persons, given by distinct id
 * or uploaded as a CSV, as PostHog's) and dynamic ones (person-property filters).
 */
export function cohortRoutes(deps: { cohorts: CohortStore; persons: ManagementPersonStore; queries: Pick<QueryService, 'cohortPersons'>; actions: Pick<ActionStore, 'definitions'>; publicUrl: string }): Router {
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

  const uploadDoc = { bodyTypes: ['application/json', 'multipart/form-data'], description: `A static cohort may come as a form: its fields, and a CSV of its persons in \`csv\` (at most ${MAX_CSV_BYTES / 1024 / 1024} MB).` };

  router.post('/', requireScopes('cohort:write'), documented({ summary: 'Create a static or dynamic cohort', body: createSchema, ...uploadDoc }), async (req, res) => {
    const csv = uploaded(req);
    const body = validate<CohortCreateBody>(createSchema, bodyOf(req));
    if (csv && !body.is_static) throw badRequest('A CSV of persons makes a static cohort: send is_static as true.', 'is_static');
    if (body.is_static) {
      if (hasConditions(body.filters)) throw badRequest('A static cohort is a list of persons: give distinct_ids, not filters.', 'filters');
    } else {
      if (!body.filters) throw badRequest('A dynamic cohort needs filters.properties, the person-property conditions its members match.', 'filters');
      if (body.distinct_ids) throw badRequest('distinct_ids only apply to a static cohort (is_static: true).', 'distinct_ids');
    }
    const teamId = projectOf(req).id;
    if (!body.is_static) await checkFilterValues(body.filters!.properties, new Date(), { teamId, cohortId: null, stores: deps });
    const cohort = await cohorts.create(
      teamId,
      { name: body.name, description: body.description, is_static: body.is_static, filters: body.filters ?? {} },
      csv ?? (body.distinct_ids && { kind: 'distinct_id', ids: body.distinct_ids }),
      principalOf(req).userId,
    );
    res.status(201).json(presentCohort(cohort));
  });

  router.get('/:id', requireScopes('cohort:read'), documented({ summary: 'Retrieve a cohort' }), async (req, res) => {
    const cohort = await cohorts.get(projectOf(req).id, cohortId(req));
    if (!cohort) throw notFound(`Cohort ${req.params.id} does not exist.`);
    res.json(presentCohort(cohort));
  });

  router.patch('/:id', requireScopes('cohort:write'), documented({ summary: "Update a cohort; a CSV upload adds to a static cohort's persons", body: patchSchema, ...uploadDoc }), async (req, res) => {
    const body = validate<Partial<CohortCreateBody>>(patchSchema, bodyOf(req));
    const teamId = projectOf(req).id;
    const id = cohortId(req);
    const existing = await cohorts.get(teamId, id);
    if (!existing) throw notFound(`Cohort ${req.params.id} does not exist.`);
    const csv = uploaded(req);
    if (body.is_static !== undefined && body.is_static !== existing.is_static) {
      throw badRequest('A cohort cannot change between static and dynamic; create a new cohort instead.', 'is_static');
    }
    if (existing.is_static && hasConditions(body.filters)) throw badRequest('A static cohort is a list of persons: give distinct_ids, not filters.', 'filters');
    if (!existing.is_static && body.distinct_ids) throw badRequest('distinct_ids only apply to a static cohort (is_static: true).', 'distinct_ids');
    if (!existing.is_static && csv) throw badRequest('A CSV of persons only applies to a static cohort.', 'csv');
    if (!existing.is_static && body.filters) await checkFilterValues(body.filters.properties, new Date(), { teamId, cohortId: id, stores: deps });
    const members = csv ? { ...csv, append: true } : body.distinct_ids && { kind: 'distinct_id' as const, ids: body.distinct_ids, append: false };
    const cohort = await cohorts.update(teamId, id, { name: body.name, description: body.description, filters: body.filters }, members);
    if (!cohort) throw notFound(`Cohort ${req.params.id} does not exist.`);
    res.json(presentCohort(cohort));
  });

  /** The cohort of the path, which must be a static one of the project. */
  async function staticCohort(req: Request, verb: 'add' | 'remove'): Promise<CohortRecord> {
    const cohort = await cohorts.get(projectOf(req).id, cohortId(req));
    if (!cohort) throw notFound(`Cohort ${req.params.id} does not exist.`);
    if (!cohort.is_static) throw badRequest(`Can only ${verb} users ${verb === 'add' ? 'to' : 'from'} static cohorts.`);
    return cohort;
  }

  router.get('/:id/persons', requireScopes('cohort:read', 'person:read'), documented({ summary: "A cohort's persons (a static one's listed, a dynamic one's matching now), as the persons endpoint shows them", query: personsQuery }), async (req, res) => {
    const query = validateQuery<Page & { format: 'json' | 'csv' }>(personsQuery, req);
    const teamId = projectOf(req).id;
    const cohort = await cohorts.get(teamId, cohortId(req));
    if (!cohort) throw notFound(`Cohort ${req.params.id} does not exist.`);
    const filters = (cohort.filters as Partial<CohortFilters>).properties ?? {};
    let count: number;
    let results: PersonRecord[];
    if (!cohort.is_static && readsEvents(filters)) {
      // What persons did is in ClickHouse; the page is then read from Postgres, as every person is shown.
      const page = await deps.queries.cohortPersons(projectOf(req), cohort.id, query, clientSignal(res));
      count = page.count;
      results = await deps.persons.byUuids(teamId, page.ids);
    } else {
      const members = cohort.is_static ? { cohortId: cohort.id } : { cohortFilters: filters as CohortFilterGroup };
      ({ count, results } = await regexOfFilters(() => deps.persons.list(teamId, { limit: query.limit, offset: query.offset, ...members, properties: [] }, new Date())));
    }
    const persons = results.map(presentPerson);
    if (query.format === 'csv') return sendCsv(res, PERSON_FIELDS, persons.map((p) => PERSON_FIELDS.map((f) => p[f])));
    res.json({ results: persons, ...pageLinks(deps.publicUrl, req, query, count) });
  });

  router.patch(
    '/:id/add_persons_to_static_cohort',
    requireScopes('cohort:write'),
    documented({ summary: 'Add persons, by uuid, to a static cohort', body: addPersonsSchema }),
    async (req, res) => {
      const { person_ids } = validateBody<{ person_ids: string[] }>(addPersonsSchema, req);
      const cohort = await staticCohort(req, 'add');
      if ((await cohorts.addPersons(projectOf(req).id, cohort.id, { kind: 'person_id', ids: person_ids })) === 0) throw badRequest('No valid users to add to cohort', 'person_ids');
      res.json({ success: true });
    },
  );

  router.patch(
    '/:id/remove_person_from_static_cohort',
    requireScopes('cohort:write'),
    documented({ summary: 'Remove a person, by uuid, from a static cohort', body: removePersonSchema }),
    async (req, res) => {
      const { person_id } = validateBody<{ person_id: string }>(removePersonSchema, req);
      const cohort = await staticCohort(req, 'remove');
      if (!(await cohorts.removePerson(projectOf(req).id, cohort.id, person_id))) throw notFound("Person with this UUID does not exist in the cohort's team");
      res.json({ success: true });
    },
  );

  router.delete('/:id', requireScopes('cohort:write'), documented({ summary: 'Delete a cohort' }), async (req, res) => {
    const teamId = projectOf(req).id;
    if (!(await cohorts.softDelete(teamId, cohortId(req)))) throw notFound(`Cohort ${req.params.id} does not exist.`);
    res.status(204).end();
  });
  return router;
}
