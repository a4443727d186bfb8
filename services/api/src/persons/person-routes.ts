import { Router, type Request, type Response } from 'express';
import { PAGE_PROPERTIES, assertStorable, badRequest, documented, notFound, validateBody, validateJsonParam, validateQuery, type Page } from '@tributary/http';
import { parseIdList } from '@tributary/persons';
import { propertyFilterProblem, type PropertyFilter } from '@tributary/property-filters';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { presentCohort } from '../cohorts/cohort-routes.js';
import { idParam } from '../http/id-param.js';
import { pageLinks, sendCsv } from '../http/responses.js';
import { PERSON_FIELDS, presentPerson, regexOfFilters } from './person-presenter.js';
import type { PersonActivityLog } from './person-activity.js';
import type { Actor, PersonService } from './person-service.js';
import type { ManagementPersonStore, PersonRecord } from './management-person-store.js';

export interface PersonRouteDeps {
  persons: ManagementPersonStore;
  activity: PersonActivityLog;
  service: PersonService;
  publicUrl: string;
}

/** The spec caps `ids` and `distinct_ids` of one bulk delete at 100 each. */
const BULK_DELETE_LIMIT = 100;

const format = { type: 'string', enum: ['json', 'csv'], default: 'json' } as const;
const listSchema = {
  type: 'object' as const,
  properties: { ...PAGE_PROPERTIES, search: { type: 'string' }, distinct_id: { type: 'string' }, email: { type: 'string' }, properties: { type: 'string' }, format },
};
const pageSchema = { type: 'object' as const, properties: { ...PAGE_PROPERTIES, format } };
const filtersSchema = {
  type: 'array',
  items: { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1 }, operator: { type: 'string' }, type: { type: 'string' } } },
};
const patchSchema = { type: 'object', required: ['properties'], properties: { properties: { type: 'object', minProperties: 1 } } };

interface ListQuery extends Page {
  search?: string;
  distinct_id?: string;
  email?: string;
  properties?: string;
  format: 'json' | 'csv';
}

/** `properties=[...]`: person-property filters, each checked against what the Postgres backend runs. */
function parseFilters(raw: string | undefined, now: Date): PropertyFilter[] {
  const filters = validateJsonParam<unknown[]>(filtersSchema, raw, 'properties') ?? [];
  filters.forEach((filter, i) => {
    const problem = propertyFilterProblem(filter, `properties[${i}]`, { types: ['person'], now });
    if (problem) throw badRequest(problem.detail, 'properties');
  });
  return filters as PropertyFilter[];
}

const personId = (req: Request) => idParam(req, 'Person', 'bigint');

function sendPersons(req: Request, res: Response, persons: PersonRecord[], wrap: (results: ReturnType<typeof presentPerson>[]) => unknown): void {
  const results = persons.map(presentPerson);
  if (req.query.format === 'csv') return sendCsv(res, PERSON_FIELDS, results.map((p) => PERSON_FIELDS.map((f) => p[f])));
  res.json(wrap(results));
}

const isTrue = (value: unknown) => value === true || value === 'true' || value === '1' || value === 1;

const ACTIVITY_FIELDS = ['id', 'user', 'activity', 'scope', 'item_id', 'detail', 'created_at'] as const;

const actorOf = (req: Request): Actor => ({ teamId: projectOf(req).id, token: projectOf(req).api_token, userId: principalOf(req).userId });

/** `/api/environments/:project_id/persons/`: read, change (through ingestion), split and delete persons. */
export function personRoutes(deps: PersonRouteDeps): Router {
  const router = Router({ mergeParams: true });
  const { persons, activity, service } = deps;

  async function existing(req: Request): Promise<PersonRecord> {
    const person = await persons.get(projectOf(req).id, personId(req));
    if (!person) throw notFound(`Person ${req.params.id} does not exist.`);
    return person;
  }

  async function sendActivity(req: Request, res: Response, personIdFilter?: number, exists = true): Promise<void> {
    const query = validateQuery<Page & { format: 'json' | 'csv' }>(pageSchema, req);
    const { count, results } = await activity.list(projectOf(req).id, query, personIdFilter);
    if (!exists && count === 0) throw notFound(`Person ${req.params.id} does not exist.`);
    if (query.format === 'csv') return sendCsv(res, ACTIVITY_FIELDS, results.map((a) => ACTIVITY_FIELDS.map((f) => a[f])));
    res.json({ count, ...pageLinks(deps.publicUrl, req, query, count), results });
  }

  router.get('/', requireScopes('person:read'), documented({ summary: 'List persons', query: listSchema }), async (req, res) => {
    const query = validateQuery<ListQuery>(listSchema, req);
    const { count, results } = await regexOfFilters(() => persons.list(
      projectOf(req).id,
      {
        limit: query.limit,
        offset: query.offset,
        properties: parseFilters(query.properties, new Date()),
        ...(query.search !== undefined && { search: query.search }),
        ...(query.distinct_id !== undefined && { distinctId: query.distinct_id }),
        ...(query.email !== undefined && { email: query.email }),
      },
      new Date(),
    ));
    sendPersons(req, res, results, (presented) => ({ count, ...pageLinks(deps.publicUrl, req, query, count), results: presented }));
  });

  router.get('/activity', requireScopes('activity_log:read'), documented({ summary: 'Activity log of the project’s persons', query: pageSchema }), (req, res) => sendActivity(req, res));

  router.get('/cohorts', requireScopes('person:read', 'cohort:read'), documented({ summary: 'Cohorts a person belongs to' }), async (req, res) => {
    const raw = req.query.person_id;
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined || value === '') throw badRequest('person_id is required: the person whose cohorts to list.', 'person_id');
    const teamId = projectOf(req).id;
    const [id] = await persons.resolveIds(teamId, [String(value)], []);
    const person = id === undefined ? null : await persons.get(teamId, id);
    if (!person) throw notFound(`Person ${String(value)} does not exist.`);
    const results = (await service.cohorts(person)).map(presentCohort);
    if (req.query.format === 'csv') return sendCsv(res, ['id', 'name', 'is_static', 'count'], results.map((c) => [c.id, c.name, c.is_static, c.count]));
    res.json({ results });
  });

  router.post('/bulk_delete', requireScopes('person:write'), documented({ summary: 'Delete up to 100 persons by id or distinct id' }), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const lists: Record<'ids' | 'distinct_ids', string[]> = { ids: [], distinct_ids: [] };
    for (const name of ['ids', 'distinct_ids'] as const) {
      const parsed = parseIdList(body[name] ?? req.query[name]);
      if (!Array.isArray(parsed)) throw badRequest(`${name} ${parsed.problem}.`, name);
      // A JSON list in the query string can spell U+0000 as an escape, past the check of the raw text; Postgres refuses it.
      assertStorable(parsed, name);
      if (parsed.length > BULK_DELETE_LIMIT) throw badRequest(`${name} can list at most ${BULK_DELETE_LIMIT} entries per call; this one has ${parsed.length}.`, name);
      lists[name] = parsed;
    }
    if (lists.ids.length === 0 && lists.distinct_ids.length === 0) throw badRequest('Give ids (person ids) or distinct_ids (their distinct ids) to delete.', 'ids');
    const found = await persons.resolveIds(projectOf(req).id, lists.ids, lists.distinct_ids);
    const { deleted, queued } = await service.delete(actorOf(req), found, isTrue(body.delete_events ?? req.query.delete_events));
    res.json({ persons_found: found.length, persons_deleted: deleted, deletions_queued: queued });
  });

  router.get('/:id', requireScopes('person:read'), documented({ summary: 'Retrieve a person' }), async (req, res) => {
    sendPersons(req, res, [await existing(req)], (results) => results[0]);
  });

  router.patch('/:id', requireScopes('person:write'), documented({ summary: 'Update person properties (through ingestion)', body: patchSchema }), async (req, res) => {
    const body = validateBody<{ properties: Record<string, unknown> }>(patchSchema, req);
    const person = await service.setProperties(actorOf(req), await existing(req), body.properties);
    sendPersons(req, res, [person], (results) => results[0]);
  });

  router.post('/:id/update_property', requireScopes('person:write'), documented({ summary: 'Set one person property (through ingestion)' }), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const key = body.key ?? req.query.key;
    if (typeof key !== 'string' || key === '') throw badRequest('key is required: the name of the property to set.', 'key');
    const value = 'value' in body ? body.value : req.query.value;
    if (value === undefined) throw badRequest('value is required: the value to set the property to.', 'value');
    await service.setProperties(actorOf(req), await existing(req), { [key]: value });
    res.status(200).end();
  });

  router.post('/:id/delete_property', requireScopes('person:write'), documented({ summary: 'Unset one person property (through ingestion)' }), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const key = req.query.$unset ?? body.$unset;
    if (typeof key !== 'string' || key === '') throw badRequest('$unset is required: the name of the property to delete.', '$unset');
    await service.deleteProperty(actorOf(req), await existing(req), key);
    res.status(200).end();
  });

  router.delete('/:id', requireScopes('person:write'), documented({ summary: 'Delete a person; `delete_events=true` queues its events for the weekly deletion batch' }), async (req, res) => {
    const { deleted } = await service.delete(actorOf(req), [personId(req)], isTrue(req.query.delete_events));
    if (deleted === 0) throw notFound(`Person ${req.params.id} does not exist.`);
    res.status(204).end();
  });

  router.post('/:id/split', requireScopes('person:write'), documented({ summary: 'Split a merged person into one person per distinct id' }), async (req, res) => {
    const main = ((req.body ?? {}) as Record<string, unknown>).main_distinct_id;
    if (main !== undefined && main !== null && typeof main !== 'string') throw badRequest('main_distinct_id must be a string.', 'main_distinct_id');
    if (!(await service.split(actorOf(req), personId(req), main ?? undefined))) throw notFound(`Person ${req.params.id} does not exist.`);
    res.status(200).end();
  });

  router.get('/:id/activity', requireScopes('activity_log:read'), documented({ summary: 'Activity log of one person', query: pageSchema }), async (req, res) => {
    const person = await existing(req).catch(() => null);
    await sendActivity(req, res, person?.id ?? personId(req), person !== null);
  });

  router.get('/:id/properties_timeline', requireScopes('person:read'), documented({ summary: 'How a person’s properties changed over time' }), async (req, res) => {
    const points = await service.propertiesTimeline(await existing(req));
    if (req.query.format === 'csv') return sendCsv(res, ['timestamp', 'properties', 'relevant_event_count', 'start_event_timestamp', 'end_event_timestamp'], points.map((p) => [p.timestamp, p.properties, p.relevant_event_count, p.start_event_timestamp, p.end_event_timestamp]));
    res.json({
      points,
      crucial_property_keys: [],
      effective_date_from: points[0]?.start_event_timestamp ?? null,
      effective_date_to: points.at(-1)?.end_event_timestamp ?? null,
    });
  });
  return router;
}
