import { Router, type Request } from 'express';
import { Ajv } from 'ajv';
import type { ClickHouse, Sql } from '@tributary/clickhouse';
import type { Pool } from '@tributary/postgres';
import { badRequest, notFound } from '@tributary/http';
import {
  QueryLanguageError,
  cohortIds,
  compileExpression,
  compilePropertyFilters,
  parseDateInput,
  parseExpression,
  type PropertyFilter,
} from '@tributary/query-language';
import { projectOf, requireScopes } from '../auth/authenticate.js';
import { pageUrl, sendCsv } from '../http/responses.js';
import { cohortConditions } from './cohort-conditions.js';
import { DEFAULT_LIMIT, MAX_LIMIT, listEventsQuery, propertyValuesQuery, type EventFilters } from './event-query.js';
import { toStoredEvent, type EventRow, type StoredEvent } from './stored-event.js';

interface ListQuery {
  limit: number;
  offset: number;
  event?: string;
  distinct_id?: string;
  person_id?: number;
  after?: string;
  before?: string;
  properties?: string;
  select?: string;
  where?: string;
  format: 'json' | 'csv';
}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true });
const validateListQuery = ajv.compile<ListQuery>({
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    offset: { type: 'integer', minimum: 0, default: 0 },
    event: { type: 'string' },
    distinct_id: { type: 'string' },
    person_id: { type: 'integer', minimum: 1 },
    after: { type: 'string' },
    before: { type: 'string' },
    properties: { type: 'string' },
    select: { type: 'string' },
    where: { type: 'string' },
    format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
  },
});
const validateFilters = ajv.compile<PropertyFilter[]>({
  type: 'array',
  items: {
    type: 'object',
    required: ['key'],
    properties: { key: { type: 'string', minLength: 1 }, operator: { type: 'string' }, type: { type: 'string' }, group_type_index: { type: 'integer' } },
  },
});
const validateExpressions = ajv.compile<string[]>({ type: 'array', items: { type: 'string', minLength: 1 } });

function firstError(errors: typeof validateListQuery.errors, prefix = ''): { attr: string | null; message: string } {
  const error = errors?.[0];
  const attr = `${prefix}${error?.instancePath.slice(1) ?? ''}` || null;
  return { attr, message: error?.message ?? 'is invalid' };
}

function parseListQuery(req: Request): ListQuery {
  const query: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(req.query)) query[key] = Array.isArray(value) ? value[0] : value;
  if (!validateListQuery(query)) {
    const { attr, message } = firstError(validateListQuery.errors);
    throw badRequest(`Query parameter ${attr} ${message}.`, attr);
  }
  return query;
}

function parseJsonParam<T>(raw: string | undefined, attr: string, validate: ((value: unknown) => value is T) & { errors?: typeof validateListQuery.errors }): T | undefined {
  if (raw === undefined || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest(`Query parameter ${attr} must be a JSON-serialized array.`, attr);
  }
  if (!validate(value)) {
    const { attr: where, message } = firstError(validate.errors, `${attr}/`);
    throw badRequest(`Query parameter ${where} ${message}.`, attr);
  }
  return value;
}

function compileOrReject<T>(attr: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof QueryLanguageError) throw badRequest(`Query parameter ${attr}: ${error.message}.`, attr, 'invalid_query');
    throw error;
  }
}

function parseTime(value: string | undefined, attr: string, now: Date): Date | undefined {
  if (value === undefined) return undefined;
  const date = parseDateInput(value, now);
  if (!date) throw badRequest(`Query parameter ${attr} must be an ISO 8601 date-time or a relative date such as -7d: ${JSON.stringify(value)}.`, attr);
  return date;
}

const STORED_EVENT_FIELDS: (keyof StoredEvent)[] = ['id', 'distinct_id', 'properties', 'event', 'timestamp', 'person', 'elements', 'elements_chain'];

export interface EventRouteDeps {
  clickhouse: ClickHouse;
  pool: Pool;
  publicUrl: string;
  clock?: () => Date;
}

/** `/api/environments/:project_id/events/`: the spec's deprecated-but-kept stored-events read side. */
export function eventRoutes(deps: EventRouteDeps): Router {
  const router = Router({ mergeParams: true });
  const clock = deps.clock ?? (() => new Date());

  async function distinctIdsOfPerson(teamId: number, personId: number): Promise<string[]> {
    const { rows } = await deps.pool.query<{ distinct_id: string }>('SELECT distinct_id FROM person_distinct_ids WHERE team_id = $1 AND person_id = $2', [teamId, personId]);
    return rows.map((r) => r.distinct_id);
  }

  router.get('/', requireScopes('query:read'), async (req, res) => {
    const query = parseListQuery(req);
    const teamId = projectOf(req).id;
    const now = clock();
    const propertyFilters = parseJsonParam(query.properties, 'properties', validateFilters) ?? [];
    const whereSources = parseJsonParam(query.where, 'where', validateExpressions) ?? [];
    const selectSources = parseJsonParam(query.select, 'select', validateExpressions);
    const cohorts = await cohortConditions(deps.pool, teamId, cohortIds(propertyFilters), now);
    const conditions: Sql[] = [
      compileOrReject('properties', () => compilePropertyFilters(propertyFilters, { teamId, now, cohorts })),
      ...whereSources.map((source) => compileOrReject('where', () => compileExpression(parseExpression(source)))),
    ];
    const select = selectSources?.map((source) => compileOrReject('select', () => compileExpression(parseExpression(source))));

    let distinctIds: string[] | undefined;
    if (query.distinct_id !== undefined) distinctIds = [query.distinct_id];
    if (query.person_id !== undefined) {
      const ofPerson = await distinctIdsOfPerson(teamId, query.person_id);
      distinctIds = distinctIds ? distinctIds.filter((id) => ofPerson.includes(id)) : ofPerson;
    }
    const filters: EventFilters = {
      teamId,
      conditions,
      ...(query.event !== undefined && { event: query.event }),
      ...(distinctIds !== undefined && { distinctIds }),
      ...(query.after !== undefined && { after: parseTime(query.after, 'after', now) }),
      ...(query.before !== undefined && { before: parseTime(query.before, 'before', now) }),
    };
    const statement = listEventsQuery(filters, query.limit, query.offset, select);
    const next = (count: number) => (count > query.limit ? pageUrl(deps.publicUrl, req, query.limit, query.offset + query.limit) : null);

    if (select && selectSources) {
      const rows = await deps.clickhouse.query<Record<string, unknown>>(statement);
      const results = rows.slice(0, query.limit).map((row) => select.map((_, i) => row[`c${i}`]));
      if (query.format === 'csv') return sendCsv(res, selectSources, results);
      res.json({ columns: selectSources, results, next: next(rows.length) });
      return;
    }
    const rows = await deps.clickhouse.query<EventRow>(statement);
    const results = rows.slice(0, query.limit).map(toStoredEvent);
    if (query.format === 'csv') return sendCsv(res, STORED_EVENT_FIELDS, results.map((e) => STORED_EVENT_FIELDS.map((f) => e[f])));
    res.json({ next: next(rows.length), results });
  });

  router.get('/values', requireScopes('query:read'), async (req, res) => {
    const key = typeof req.query.key === 'string' ? req.query.key : '';
    if (!key) throw badRequest('Query parameter key is required: the property whose values to list.', 'key');
    const value = typeof req.query.value === 'string' ? req.query.value : undefined;
    const event = typeof req.query.event_name === 'string' ? req.query.event_name : undefined;
    const rows = await deps.clickhouse.query<{ name: string }>(propertyValuesQuery(projectOf(req).id, key, value, event));
    const results = rows.map((r) => ({ name: r.name }));
    if (req.query.format === 'csv') return sendCsv(res, ['name'], results.map((r) => [r.name]));
    res.json(results);
  });

  router.get('/:id', requireScopes('query:read'), async (req, res) => {
    const rows = await deps.clickhouse.query<EventRow>(listEventsQuery({ teamId: projectOf(req).id, uuid: String(req.params.id) }, 1, 0));
    const row = rows[0];
    if (!row) throw notFound(`Event ${req.params.id} does not exist in this project.`);
    const event = toStoredEvent(row);
    if (req.query.format === 'csv') return sendCsv(res, STORED_EVENT_FIELDS, [STORED_EVENT_FIELDS.map((f) => event[f])]);
    res.json(event);
  });
  return router;
}
