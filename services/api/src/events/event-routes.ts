import { Router } from 'express';
import { Sql, materializedColumnsOf, queryInputProblem, serverOf, type ClickHouse } from '@tributary/clickhouse';
import { PAGE_PROPERTIES, badRequest, documented, notFound, validateJsonParam, validateQuery } from '@tributary/http';
import { HogQLError, cohortIds, containsAggregate, containsAsterisk, parseExpr, printQuery, propertyFilterExprs, queryError, type Expr, type SelectQuery } from '@tributary/hogql';
import { PropertyFilterError, parseDateInput, type StoredPropertyFilter } from '@tributary/property-filters';
import { projectOf, requireScopes } from '../auth/authenticate.js';
import type { CohortStore } from '../cohorts/cohort-store.js';
import type { ActionStore } from '../actions/action-store.js';
import { pageUrl, sendCsv } from '../http/responses.js';
import type { ManagementPersonStore } from '../persons/management-person-store.js';
import { filterContext } from '../cohorts/filter-cohorts.js';
import { eventsByIdQuery, listEventsQuery, onStoredPerson, pageOfEventsQuery, propertyValuesQuery, type EventListFilters } from './events-list-query.js';
import { readNewestFirst } from '../query/look-back.js';
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

const listQuerySchema = {
  type: 'object' as const,
  properties: {
    ...PAGE_PROPERTIES,
    event: { type: 'string' },
    distinct_id: { type: 'string' },
    person_id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    after: { type: 'string' },
    before: { type: 'string' },
    properties: { type: 'string' },
    select: { type: 'string' },
    where: { type: 'string' },
    format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
  },
};
const filtersSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['key'],
    properties: { key: { type: 'string', minLength: 1 }, operator: { type: 'string' }, type: { type: 'string' }, group_type_index: { type: 'integer' } },
  },
};
const expressionsSchema = { type: 'array', items: { type: 'string', minLength: 1 } };

/** Compile errors (a filter or expression the backends cannot run) are the client's: a 400 naming the parameter. */
async function compileOrReject<T>(attr: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof HogQLError || error instanceof PropertyFilterError) {
      throw badRequest(`Query parameter ${attr}: ${error.message}.`, attr, 'invalid_query');
    }
    throw error;
  }
}

/**
 * Runs a query the client's filters and expressions shaped: ClickHouse refusing it for its data
 * (text compared with a number, a pattern RE2 cannot compile) is the client's mistake, not a 500.
 */
async function clientQuery<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    // Any name or form the printer refuses came from the client's filters or expressions.
    if (error instanceof HogQLError) throw badRequest(`The query cannot run: ${error.message}. Check properties, where and select.`, null, 'invalid_query');
    const problem = queryInputProblem(error);
    if (problem) throw badRequest(`The query cannot run: ${problem}. Check properties, where and select.`, null, 'invalid_query');
    throw error;
  }
}

/** One HogQL expression over the project's events, as the list reads them. */
async function eventsExpression(source: string, teamId: number): Promise<Expr> {
  const expr = await parseExpr(source);
  // The list returns rows, one per event: an aggregation has no rows to fold here.
  if (containsAggregate(expr)) throw queryError('Aggregations such as count() are not available in the events list: use the query endpoint');
  // Each expression is one column or one condition, so `*` has nothing to stand for here.
  if (containsAsterisk(expr)) throw queryError('* is not available in the events list: name the columns or properties');
  const onEvent = onStoredPerson(expr);
  // Printed alone first, so a name it cannot resolve is refused as this parameter's.
  printQuery({ node: 'SelectQuery', select: [onEvent], select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } } }, { teamId });
  return onEvent;
}

/** Runs one of the list's trees, printed for the project: the printer adds the tenant guard, as to any query. */
async function read<T>(clickhouse: ClickHouse, teamId: number, query: SelectQuery): Promise<T[]> {
  const server = await serverOf(clickhouse);
  const materialized = await materializedColumnsOf(clickhouse);
  // The printer quotes every name and escapes every value, and refuses what is not on its allow-lists.
  return clickhouse.query<T>(Sql.trusted(printQuery(query, { teamId, server, materialized }).clickhouse));
}

function parseTime(value: string | undefined, attr: string, now: Date): Date | undefined {
  if (value === undefined) return undefined;
  const date = parseDateInput(value, now);
  if (!date) throw badRequest(`Query parameter ${attr} must be an ISO 8601 date-time or a relative date such as -7d: ${JSON.stringify(value)}.`, attr);
  return date;
}

const STORED_EVENT_FIELDS: (keyof StoredEvent)[] = ['id', 'distinct_id', 'properties', 'event', 'timestamp', 'person', 'elements', 'elements_chain'];

/** A newest-first page of the list's rows (`limit` + 1 tell whether a next page exists), read by widening look-back windows. */
function newestPage<T>(filters: EventListFilters, limit: number, now: Date, read: (filters: EventListFilters) => Promise<T[]>): Promise<T[]> {
  return readNewestFirst(filters.before ?? now, filters.after, (rows) => rows.length > limit, (from) => read(from ? { ...filters, after: from } : filters));
}

/** Rows as stored events, each naming its distinct id's current person. */
async function storedEvents(persons: ManagementPersonStore, teamId: number, rows: readonly EventRow[]): Promise<StoredEvent[]> {
  const current = await persons.ofDistinctIds(teamId, rows.map((row) => row.distinct_id));
  return rows.map((row) => toStoredEvent(row, current.get(row.distinct_id)));
}

/** The full rows of a page of ids, in the page's order. */
async function eventsOfPage(clickhouse: ClickHouse, teamId: number, page: readonly { id: string; ts: string }[]): Promise<EventRow[]> {
  if (page.length === 0) return [];
  const times = page.map((p) => p.ts).sort();
  const rows = await read<EventRow>(clickhouse, teamId, eventsByIdQuery(page.map((p) => p.id), times[0]!, times.at(-1)!));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return page.map((p) => byId.get(p.id)).filter((row): row is EventRow => row !== undefined);
}

export interface EventRouteDeps {
  clickhouse: ClickHouse;
  cohorts: CohortStore;
  actions: Pick<ActionStore, 'definitions'>;
  persons: ManagementPersonStore;
  publicUrl: string;
  clock?: () => Date;
}

/** `/api/environments/:project_id/events/`: the spec's deprecated-but-kept stored-events read side. */
export function eventRoutes(deps: EventRouteDeps): Router {
  const router = Router({ mergeParams: true });
  const clock = deps.clock ?? (() => new Date());

  router.get('/', requireScopes('query:read'), documented({ summary: 'List stored events (deprecated; kept for compatibility)', query: listQuerySchema }), async (req, res) => {
    const query = validateQuery<ListQuery>(listQuerySchema, req);
    const teamId = projectOf(req).id;
    const now = clock();
    const propertyFilters = validateJsonParam<StoredPropertyFilter[]>(filtersSchema, query.properties, 'properties') ?? [];
    const whereSources = validateJsonParam<string[]>(expressionsSchema, query.where, 'where') ?? [];
    const selectSources = validateJsonParam<string[]>(expressionsSchema, query.select, 'select');
    const context = await filterContext(deps, teamId, cohortIds(propertyFilters), now);
    const conditions: Expr[] = [
      ...(await compileOrReject('properties', () => propertyFilterExprs(propertyFilters, context))),
      ...(await Promise.all(whereSources.map((source) => compileOrReject('where', () => eventsExpression(source, teamId))))),
    ];
    const select = selectSources && (await Promise.all(selectSources.map((source) => compileOrReject('select', () => eventsExpression(source, teamId)))));

    let distinctIds: string[] | undefined;
    if (query.distinct_id !== undefined) distinctIds = [query.distinct_id];
    if (query.person_id !== undefined) {
      const ofPerson = (await deps.persons.get(teamId, query.person_id))?.distinct_ids ?? [];
      distinctIds = distinctIds ? distinctIds.filter((id) => ofPerson.includes(id)) : ofPerson;
    }
    const filters: EventListFilters = {
      conditions,
      ...(query.event !== undefined && { event: query.event }),
      ...(distinctIds !== undefined && { distinctIds }),
      ...(query.after !== undefined && { after: parseTime(query.after, 'after', now) }),
      ...(query.before !== undefined && { before: parseTime(query.before, 'before', now) }),
    };
    const next = (count: number) => (count > query.limit ? pageUrl(deps.publicUrl, req, query.limit, query.offset + query.limit) : null);

    if (select && selectSources) {
      const rows = await clientQuery(() => newestPage(filters, query.limit, now, (window) => read<Record<string, unknown>>(deps.clickhouse, teamId, listEventsQuery(window, query.limit, query.offset, select))));
      const results = rows.slice(0, query.limit).map((row) => select.map((_, i) => row[`c${i}`]));
      if (query.format === 'csv') return sendCsv(res, selectSources, results);
      res.json({ columns: selectSources, results, next: next(rows.length) });
      return;
    }
    const page = await clientQuery(() => newestPage(filters, query.limit, now, (window) => read<{ id: string; ts: string }>(deps.clickhouse, teamId, pageOfEventsQuery(window, query.limit, query.offset))));
    const rows = await clientQuery(() => eventsOfPage(deps.clickhouse, teamId, page.slice(0, query.limit)));
    const results = await storedEvents(deps.persons, teamId, rows);
    if (query.format === 'csv') return sendCsv(res, STORED_EVENT_FIELDS, results.map((e) => STORED_EVENT_FIELDS.map((f) => e[f])));
    res.json({ next: next(page.length), results });
  });

  router.get('/values', requireScopes('query:read'), documented({ summary: 'Values seen for an event property' }), async (req, res) => {
    const key = typeof req.query.key === 'string' ? req.query.key : '';
    if (!key) throw badRequest('Query parameter key is required: the property whose values to list.', 'key');
    const value = typeof req.query.value === 'string' ? req.query.value : undefined;
    const event = typeof req.query.event_name === 'string' ? req.query.event_name : undefined;
    const rows = await read<{ name: string }>(deps.clickhouse, projectOf(req).id, propertyValuesQuery(key, value, event));
    const results = rows.map((r) => ({ name: r.name }));
    if (req.query.format === 'csv') return sendCsv(res, ['name'], results.map((r) => [r.name]));
    res.json(results);
  });

  router.get('/:id', requireScopes('query:read'), documented({ summary: 'Retrieve one stored event' }), async (req, res) => {
    const teamId = projectOf(req).id;
    const rows = await read<EventRow>(deps.clickhouse, teamId, listEventsQuery({ uuid: String(req.params.id) }, 1, 0));
    const row = rows[0];
    if (!row) throw notFound(`Event ${req.params.id} does not exist in this project.`);
    const event = (await storedEvents(deps.persons, teamId, [row]))[0]!;
    if (req.query.format === 'csv') return sendCsv(res, STORED_EVENT_FIELDS, [STORED_EVENT_FIELDS.map((f) => event[f])]);
    res.json(event);
  });
  return router;
}
