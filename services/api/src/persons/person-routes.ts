import { Router, type Request, type Response } from 'express';
import { Ajv, type ErrorObject } from 'ajv';
import { sql, type ClickHouse } from '@tributary/clickhouse';
import type { CohortDefinition, CohortFilterGroup } from '@tributary/flags';
import { isCohortMember } from '@tributary/flags';
import { queueEventDeletion } from '@tributary/deletions';
import { badRequest, notFound, serviceUnavailable } from '@tributary/http';
import { planSplit, splitPersonUuid } from '@tributary/ingestion';
import { parseIdList, personDisplayName, propertiesTimeline, propertyChanges } from '@tributary/persons';
import { withTransaction, type Pool } from '@tributary/postgres';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { presentCohort } from '../cohorts/cohort-routes.js';
import type { CohortRecord } from '../cohorts/cohort-store.js';
import { pageLinks, sendCsv } from '../http/responses.js';
import { PersonActivityLog } from './person-activity.js';
import type { PersonCopies } from './person-copies.js';
import type { PersonEventPublisher } from './person-event-publisher.js';
import type { PersonPropertyFilter } from './person-property-filters.js';
import { PersonStore, type PersonRecord } from './person-store.js';

export interface PersonRouteDeps {
  pool: Pool;
  clickhouse: ClickHouse;
  copies: PersonCopies;
  events: PersonEventPublisher;
  publicUrl: string;
}

/** The spec caps `ids` and `distinct_ids` of one bulk delete at 100 each. */
const BULK_DELETE_LIMIT = 100;
/** Events scanned for a properties timeline, oldest first. */
const TIMELINE_EVENT_LIMIT = 10_000;

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true });
const validateList = ajv.compile<{ limit: number; offset: number; search?: string; distinct_id?: string; email?: string; properties?: string; format: 'json' | 'csv' }>({
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    offset: { type: 'integer', minimum: 0, default: 0 },
    search: { type: 'string' },
    distinct_id: { type: 'string' },
    email: { type: 'string' },
    properties: { type: 'string' },
    format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
  },
});
const validatePage = ajv.compile<{ limit: number; offset: number; format: 'json' | 'csv' }>({
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    offset: { type: 'integer', minimum: 0, default: 0 },
    format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
  },
});
const validateFilters = ajv.compile<PersonPropertyFilter[]>({
  type: 'array',
  items: { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1 }, operator: { type: 'string' }, type: { type: 'string' } } },
});
const validatePatch = ajv.compile<{ properties: Record<string, unknown> }>({
  type: 'object',
  required: ['properties'],
  properties: { properties: { type: 'object', minProperties: 1 } },
});

function rejectQuery(errors: ErrorObject[] | null | undefined): never {
  const error = errors?.[0];
  const attr = error?.instancePath.slice(1) || (error?.params as { missingProperty?: string } | undefined)?.missingProperty || null;
  throw badRequest(`${attr ?? 'The request'} ${error?.message ?? 'is invalid'}.`, attr);
}

function singleValues(query: Request['query']): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
}

function personId(req: Request): number {
  const raw = String(req.params.id);
  if (!/^\d{1,15}$/.test(raw)) throw notFound(`Person ${raw} does not exist.`);
  return Number(raw);
}

const PERSON_FIELDS = ['id', 'name', 'distinct_ids', 'properties', 'created_at', 'uuid'] as const;

function present(person: PersonRecord) {
  return {
    id: person.id,
    name: personDisplayName(person.properties, person.distinct_ids),
    distinct_ids: person.distinct_ids,
    properties: person.properties,
    created_at: person.created_at.toISOString(),
    uuid: person.uuid,
  };
}

function sendPersons(req: Request, res: Response, persons: PersonRecord[], wrap: (results: ReturnType<typeof present>[]) => unknown): void {
  const results = persons.map(present);
  if (req.query.format === 'csv') return sendCsv(res, PERSON_FIELDS, results.map((p) => PERSON_FIELDS.map((f) => p[f])));
  res.json(wrap(results));
}

const isTrue = (value: unknown) => value === true || value === 'true' || value === '1' || value === 1;

/** `/api/environments/:project_id/persons/`: read, change (through ingestion), split and delete persons. */
export function personRoutes(deps: PersonRouteDeps): Router {
  const router = Router({ mergeParams: true });
  const persons = new PersonStore(deps.pool);
  const activity = new PersonActivityLog(deps.pool);

  async function existing(req: Request): Promise<PersonRecord> {
    const person = await persons.get(projectOf(req).id, personId(req));
    if (!person) throw notFound(`Person ${req.params.id} does not exist.`);
    return person;
  }

  async function publish(req: Request, person: PersonRecord, event: string, properties: Record<string, unknown>): Promise<void> {
    const distinctId = person.distinct_ids[0];
    if (distinctId === undefined) throw badRequest(`Person ${person.id} has no distinct id to send the change as.`);
    try {
      await deps.events.publish(projectOf(req).api_token, distinctId, event, properties);
    } catch (error) {
      throw serviceUnavailable(`The change could not be queued for ingestion (${(error as Error).message}); nothing was changed, retry.`);
    }
  }

  async function deletePersons(req: Request, ids: number[], deleteEvents: boolean): Promise<{ deleted: number; queued: number }> {
    const teamId = projectOf(req).id;
    const userId = principalOf(req).userId;
    const result = await withTransaction(deps.pool, async (client) => {
      const removed = await persons.delete(client, teamId, ids);
      let queued = 0;
      for (const person of removed.persons) {
        const distinctIds = removed.distinctIds.filter((d) => d.person_uuid === person.uuid).map((d) => d.distinct_id);
        if (deleteEvents) {
          await queueEventDeletion(client, { teamId, personUuid: person.uuid, distinctIds, requestedBy: userId });
          queued += 1;
        }
        await activity.record(client, {
          teamId,
          personId: person.id,
          activity: 'deleted',
          userId,
          detail: { name: personDisplayName(person.properties, person.distinct_ids), uuid: person.uuid, distinct_ids: distinctIds, delete_events: deleteEvents },
        });
      }
      return { ...removed, queued };
    });
    await deps.copies.deleted(teamId, result.persons, result.distinctIds);
    return { deleted: result.persons.length, queued: result.queued };
  }

  router.get('/', requireScopes('person:read'), async (req, res) => {
    const query = singleValues(req.query);
    if (!validateList(query)) rejectQuery(validateList.errors);
    let filters: PersonPropertyFilter[] = [];
    if (query.properties !== undefined && query.properties !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(query.properties);
      } catch {
        throw badRequest('properties must be a JSON list of property filters.', 'properties');
      }
      if (!validateFilters(parsed)) rejectQuery(validateFilters.errors?.map((e) => ({ ...e, instancePath: `/properties${e.instancePath}` })));
      filters = parsed;
    }
    const teamId = projectOf(req).id;
    const { count, results } = await persons.list(teamId, {
      limit: query.limit,
      offset: query.offset,
      properties: filters,
      ...(query.search !== undefined && { search: query.search }),
      ...(query.distinct_id !== undefined && { distinctId: query.distinct_id }),
      ...(query.email !== undefined && { email: query.email }),
    });
    sendPersons(req, res, results, (presented) => ({ count, ...pageLinks(deps.publicUrl, req, query, count), results: presented }));
  });

  router.get('/activity', requireScopes('activity_log:read'), async (req, res) => {
    const query = singleValues(req.query);
    if (!validatePage(query)) rejectQuery(validatePage.errors);
    const { count, results } = await activity.list(projectOf(req).id, query);
    if (query.format === 'csv') return sendCsv(res, ['id', 'user', 'activity', 'scope', 'item_id', 'detail', 'created_at'], results.map((a) => [a.id, a.user, a.activity, a.scope, a.item_id, a.detail, a.created_at]));
    res.json({ count, ...pageLinks(deps.publicUrl, req, query, count), results });
  });

  router.get('/cohorts', requireScopes('person:read', 'cohort:read'), async (req, res) => {
    const raw = singleValues(req.query).person_id;
    if (raw === undefined || raw === '') throw badRequest('person_id is required: the person whose cohorts to list.', 'person_id');
    const teamId = projectOf(req).id;
    const [id] = await persons.resolveIds(teamId, [String(raw)], []);
    const person = id === undefined ? null : await persons.get(teamId, id);
    if (!person) throw notFound(`Person ${String(raw)} does not exist.`);
    const { rows } = await deps.pool.query<CohortRecord>(
      `SELECT c.id, c.team_id, c.name, c.description, c.is_static, c.filters, c.deleted, c.created_by, c.created_at, c.updated_at,
              CASE WHEN c.is_static THEN (SELECT count(*)::int FROM cohort_people cp WHERE cp.cohort_id = c.id) END AS count,
              EXISTS (SELECT 1 FROM cohort_people cp WHERE cp.cohort_id = c.id AND cp.person_id = $2) AS listed
         FROM cohorts c WHERE c.team_id = $1 AND NOT c.deleted ORDER BY c.id`,
      [teamId, person.id],
    );
    const listed = new Set(rows.filter((r) => (r as CohortRecord & { listed: boolean }).listed).map((r) => r.id));
    const definitions = new Map<number, CohortDefinition>(
      rows.map((r) => [r.id, r.is_static ? { id: r.id, kind: 'static' } : { id: r.id, kind: 'dynamic', filters: ((r.filters as { properties?: CohortFilterGroup }).properties ?? {}) }]),
    );
    const context = {
      distinctId: person.distinct_ids[0] ?? '',
      personProperties: person.properties,
      groups: {},
      groupProperties: {},
      groupTypeMapping: {},
      cohorts: definitions,
      staticCohortIds: listed,
      now: new Date(),
    };
    const results = rows.filter((r) => isCohortMember(r.id, context)).map(presentCohort);
    if (req.query.format === 'csv') return sendCsv(res, ['id', 'name', 'is_static', 'count'], results.map((c) => [c.id, c.name, c.is_static, c.count]));
    res.json({ results });
  });

  router.post('/bulk_delete', requireScopes('person:write'), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const lists: Record<'ids' | 'distinct_ids', string[]> = { ids: [], distinct_ids: [] };
    for (const name of ['ids', 'distinct_ids'] as const) {
      const parsed = parseIdList(body[name] ?? req.query[name]);
      if (!Array.isArray(parsed)) throw badRequest(`${name} ${parsed.problem}.`, name);
      if (parsed.length > BULK_DELETE_LIMIT) throw badRequest(`${name} can list at most ${BULK_DELETE_LIMIT} entries per call; this one has ${parsed.length}.`, name);
      lists[name] = parsed;
    }
    if (lists.ids.length === 0 && lists.distinct_ids.length === 0) throw badRequest('Give ids (person ids) or distinct_ids (their distinct ids) to delete.', 'ids');
    const found = await persons.resolveIds(projectOf(req).id, lists.ids, lists.distinct_ids);
    const { deleted, queued } = await deletePersons(req, found, isTrue(body.delete_events ?? req.query.delete_events));
    res.json({ persons_found: found.length, persons_deleted: deleted, deletions_queued: queued });
  });

  router.get('/:id', requireScopes('person:read'), async (req, res) => {
    sendPersons(req, res, [await existing(req)], (results) => results[0]);
  });

  router.patch('/:id', requireScopes('person:write'), async (req, res) => {
    const body = { ...((req.body ?? {}) as Record<string, unknown>) };
    if (!validatePatch(body)) rejectQuery(validatePatch.errors);
    const person = await existing(req);
    await publish(req, person, '$set', { $set: body.properties });
    const after = { ...person.properties, ...body.properties };
    await activity.record(deps.pool, {
      teamId: person.team_id,
      personId: person.id,
      activity: 'updated',
      userId: principalOf(req).userId,
      detail: { name: personDisplayName(after, person.distinct_ids), changes: propertyChanges(person.properties, after) },
    });
    sendPersons(req, res, [{ ...person, properties: after }], (results) => results[0]);
  });

  router.post('/:id/update_property', requireScopes('person:write'), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const key = body.key ?? req.query.key;
    if (typeof key !== 'string' || key === '') throw badRequest('key is required: the name of the property to set.', 'key');
    const value = 'value' in body ? body.value : req.query.value;
    if (value === undefined) throw badRequest('value is required: the value to set the property to.', 'value');
    const person = await existing(req);
    await publish(req, person, '$set', { $set: { [key]: value } });
    await activity.record(deps.pool, {
      teamId: person.team_id,
      personId: person.id,
      activity: 'updated',
      userId: principalOf(req).userId,
      detail: { name: personDisplayName(person.properties, person.distinct_ids), changes: propertyChanges(person.properties, { ...person.properties, [key]: value }) },
    });
    res.status(200).end();
  });

  router.post('/:id/delete_property', requireScopes('person:write'), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const key = req.query.$unset ?? body.$unset;
    if (typeof key !== 'string' || key === '') throw badRequest('$unset is required: the name of the property to delete.', '$unset');
    const person = await existing(req);
    await publish(req, person, '$delete_person_property', { $unset: [key] });
    const { [key]: _removed, ...after } = person.properties;
    await activity.record(deps.pool, {
      teamId: person.team_id,
      personId: person.id,
      activity: 'updated',
      userId: principalOf(req).userId,
      detail: { name: personDisplayName(person.properties, person.distinct_ids), changes: propertyChanges(person.properties, after) },
    });
    res.status(200).end();
  });

  router.delete('/:id', requireScopes('person:write'), async (req, res) => {
    const id = personId(req);
    const { deleted } = await deletePersons(req, [id], isTrue(req.query.delete_events));
    if (deleted === 0) throw notFound(`Person ${req.params.id} does not exist.`);
    res.status(204).end();
  });

  router.post('/:id/split', requireScopes('person:write'), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const main = body.main_distinct_id;
    if (main !== undefined && main !== null && typeof main !== 'string') throw badRequest('main_distinct_id must be a string.', 'main_distinct_id');
    const teamId = projectOf(req).id;
    const id = personId(req);
    const outcome = await withTransaction(deps.pool, async (client) => {
      const person = await persons.lock(client, teamId, id);
      if (!person) throw notFound(`Person ${req.params.id} does not exist.`);
      const plan = planSplit(person.distinct_ids, typeof main === 'string' ? main : undefined);
      if (!plan) return { created: [], moved: [] };
      const created: PersonRecord[] = [];
      const moved = [];
      for (const distinctId of plan.split) {
        const result = await persons.moveToOwnPerson(client, teamId, distinctId, splitPersonUuid(teamId, distinctId), person.version + 1);
        created.push(result.person);
        moved.push(result.distinctId);
      }
      if (plan.split.length > 0) {
        await activity.record(client, {
          teamId,
          personId: person.id,
          activity: 'split',
          userId: principalOf(req).userId,
          detail: { name: personDisplayName(person.properties, person.distinct_ids), kept: plan.keep, split: created.map((p) => ({ distinct_id: p.distinct_ids[0], person_id: p.id, uuid: p.uuid })) },
        });
      }
      return { created, moved };
    });
    await deps.copies.split(teamId, outcome.created, outcome.moved);
    res.status(200).end();
  });

  router.get('/:id/activity', requireScopes('activity_log:read'), async (req, res) => {
    const query = singleValues(req.query);
    if (!validatePage(query)) rejectQuery(validatePage.errors);
    const person = await existing(req).catch(() => null);
    const { count, results } = await activity.list(projectOf(req).id, query, person?.id ?? personId(req));
    if (!person && count === 0) throw notFound(`Person ${req.params.id} does not exist.`);
    if (query.format === 'csv') return sendCsv(res, ['id', 'user', 'activity', 'scope', 'item_id', 'detail', 'created_at'], results.map((a) => [a.id, a.user, a.activity, a.scope, a.item_id, a.detail, a.created_at]));
    res.json({ count, ...pageLinks(deps.publicUrl, req, query, count), results });
  });

  router.get('/:id/properties_timeline', requireScopes('person:read'), async (req, res) => {
    const person = await existing(req);
    const rows = await deps.clickhouse.query<{ timestamp: string; person_properties: string }>(
      sql`SELECT toString(timestamp) AS timestamp, person_properties FROM events
           WHERE team_id = ${person.team_id} AND toString(person_id) = ${person.uuid}
           ORDER BY timestamp, uuid LIMIT 1 BY uuid LIMIT ${TIMELINE_EVENT_LIMIT}`,
    );
    const points = propertiesTimeline(
      rows.map((r) => ({ timestamp: `${r.timestamp.replace(' ', 'T')}Z`, properties: JSON.parse(r.person_properties || '{}') as Record<string, unknown> })),
    );
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
