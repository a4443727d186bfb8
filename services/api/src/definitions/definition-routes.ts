import { Router, type Request } from 'express';
import { PAGE_PROPERTIES, badRequest, documented, notFound, pageOf, validate, validateBody, validateJsonParam, validateQuery } from '@tributary/http';
import { PROPERTY_TYPES } from '@tributary/ingestion';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { clientSignal, pageLinks } from '../http/responses.js';
import { uuidParam } from '../http/uuid.js';
import { presentUser, type UserColumns } from '../organizations/organization-user.js';
import type { QueryService } from '../query/query-service.js';
import type { DefinitionChanges, DefinitionStore, EventDefinitionRow, EventOrdering, PropertyDefinitionRow } from './definition-store.js';

/** Keys ingestion sets on events that PostHog never lists as event properties. */
const HIDDEN_EVENT_PROPERTIES = ['distinct_id', '$set', '$set_once', '$groups', '$group_type', '$group_key', '$group_set', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'];

const EVENT_TYPES = ['all', 'event', 'action_event', 'event_posthog', 'event_custom'] as const;

const eventListQuery = {
  type: 'object',
  properties: {
    ...PAGE_PROPERTIES,
    search: { type: 'string' },
    event_type: { type: 'string', enum: EVENT_TYPES },
    exclude_hidden: { type: 'boolean' },
    excluded_properties: { type: 'string' },
    ordering: { type: 'string' },
  },
} as const;

const propertyListQuery = {
  type: 'object',
  properties: {
    ...PAGE_PROPERTIES,
    search: { type: 'string' },
    type: { type: 'string', enum: ['event', 'person', 'group'] },
    group_type_index: { type: 'integer', minimum: 0, maximum: 4 },
    properties: { type: 'string' },
    is_numerical: { type: 'boolean' },
    is_feature_flag: { type: 'boolean' },
    event_names: { type: 'string' },
    filter_by_event_names: { type: 'boolean' },
    exclude_hidden: { type: 'boolean' },
    excluded_properties: { type: 'string' },
  },
} as const;

const editable = {
  description: { type: 'string', maxLength: 4000 },
  tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 255 }, maxItems: 100 },
  verified: { type: 'boolean' },
  hidden: { type: 'boolean' },
};
// Read-only fields a client sends back (name, last_seen_at, ...) are ignored, as PostHog's serializers ignore them.
const eventPatchSchema = { type: 'object', properties: editable };
const propertyPatchSchema = { type: 'object', properties: { ...editable, property_type: { enum: [...PROPERTY_TYPES, null] } } };

const NAME_LIST = { type: 'array', items: { type: 'string' }, maxItems: 1000 };

/** Tags as PostHog's tagging keeps them: trimmed, lower case, each once. */
const tagsOf = (tags: string[] | undefined) => (tags === undefined ? undefined : [...new Set(tags.map((tag) => tag.trim().toLowerCase()).filter(Boolean))]);

function checkChanges(body: DefinitionChanges): DefinitionChanges {
  if (body.hidden && body.verified) throw badRequest('A definition cannot be both hidden and verified.', 'hidden');
  return { description: body.description, tags: tagsOf(body.tags), verified: body.verified, hidden: body.hidden };
}

/** `ordering` values PostHog takes, repeatable, each with an optional `-` for descending. */
function orderingOf(req: Request): EventOrdering[] {
  const raw = req.query.ordering;
  const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String);
  const ordering: EventOrdering[] = [];
  for (const value of values) {
    const column = value.replace(/^-/, '');
    if (column === 'name' || column === 'last_seen_at' || column === 'last_seen_at::date') ordering.push({ column, descending: value.startsWith('-') });
  }
  return ordering.length > 0 ? ordering : [{ column: 'last_seen_at::date', descending: true }, { column: 'name', descending: false }];
}

function editableFields(row: EventDefinitionRow | PropertyDefinitionRow, users: Map<number, UserColumns>) {
  const user = (id: number | null) => (id === null || !users.has(id) ? null : presentUser(users.get(id)!));
  return {
    description: row.description,
    tags: row.tags,
    updated_at: row.updated_at.toISOString(),
    updated_by: user(row.updated_by),
    verified: row.verified,
    verified_at: row.verified_at?.toISOString() ?? null,
    verified_by: user(row.verified_by),
    hidden: row.hidden,
  };
}

/** An event definition as PostHog's enterprise serializer answers it; actions are not definitions here. */
export function presentEventDefinition(row: EventDefinitionRow, users: Map<number, UserColumns>, volume: number | null) {
  return {
    id: row.id,
    name: row.name,
    owner: null,
    ...editableFields(row, users),
    created_at: row.created_at.toISOString(),
    last_seen_at: row.last_seen_at?.toISOString() ?? null,
    last_updated_at: row.updated_at.toISOString(),
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: null,
    created_by: null,
    post_to_slack: false,
    default_columns: [],
    volume_30_day: volume,
    query_usage_30_day: null,
  };
}

/** A property definition as PostHog's enterprise serializer answers it. */
export function presentPropertyDefinition(row: PropertyDefinitionRow, users: Map<number, UserColumns>) {
  return {
    id: row.id,
    name: row.name,
    is_numerical: row.is_numerical,
    property_type: row.property_type,
    is_seen_on_filtered_events: row.is_seen_on_filtered_events,
    ...editableFields(row, users),
  };
}

const usersOf = (store: DefinitionStore, rows: readonly (EventDefinitionRow | PropertyDefinitionRow)[]) => store.users(rows.flatMap((row) => [row.updated_by, row.verified_by]));

/**
 * `/event_definitions/` and `/property_definitions/`: the names and property keys ingest has seen
 * in the project, with members' descriptions, tags and verification, in PostHog's shapes.
 */
export function definitionRoutes(deps: { definitions: DefinitionStore; query: Pick<QueryService, 'run'>; publicUrl: string }) {
  const { definitions: store } = deps;

  /**
   * Events of each name in the last 30 days, counted when read: one grouped query for the page,
   * through the printer, instead of a counter per event in ingest. Definitions stay listed when
   * ClickHouse cannot answer, their volume null.
   */
  const volumes = async (req: Request, names: string[]): Promise<Map<string, number> | null> => {
    if (names.length === 0) return new Map();
    try {
      const answer = (await deps.query.run(
        projectOf(req),
        // One row a name, and a page holds up to 1,000 names: past HogQL's default LIMIT of 100.
        { kind: 'HogQLQuery', query: 'SELECT event, count() FROM events WHERE timestamp > now() - INTERVAL 30 DAY AND event IN {names} GROUP BY event LIMIT {rows}', values: { names, rows: names.length } },
        clientSignal(req.res!),
      )) as { results: [string, number][] };
      return new Map(answer.results.map(([event, count]) => [event, Number(count)]));
    } catch {
      return null;
    }
  };

  const events = Router({ mergeParams: true });
  events.get('/', requireScopes('event_definition:read'), documented({ summary: 'List event definitions', query: eventListQuery }), async (req, res) => {
    const page = pageOf(req);
    const query = validateQuery<{ search?: string; event_type?: (typeof EVENT_TYPES)[number]; exclude_hidden?: boolean; excluded_properties?: string }>(eventListQuery, req);
    const teamId = projectOf(req).id;
    const eventType = query.event_type ?? 'event';
    const empty = { count: 0, results: [] as EventDefinitionRow[] };
    // Actions are not among the definitions: only an actions-only list differs, and it is empty.
    const { count, results } =
      eventType === 'action_event'
        ? empty
        : await store.listEvents(
            teamId,
            {
              search: query.search,
              origin: eventType === 'event_posthog' ? 'posthog' : eventType === 'event_custom' ? 'custom' : 'any',
              excludeHidden: query.exclude_hidden ?? false,
              excluded: validateJsonParam<string[]>(NAME_LIST, query.excluded_properties, 'excluded_properties') ?? [],
              ordering: orderingOf(req),
            },
            page.limit,
            page.offset,
          );
    const [users, volume] = await Promise.all([usersOf(store, results), volumes(req, results.map((row) => row.name))]);
    res.json({
      count,
      ...pageLinks(deps.publicUrl, req, page, count),
      results: results.map((row) => presentEventDefinition(row, users, volume ? (volume.get(row.name) ?? 0) : null)),
    });
  });

  const presentOneEvent = async (req: Request, row: EventDefinitionRow) => {
    const [users, volume] = await Promise.all([usersOf(store, [row]), volumes(req, [row.name])]);
    return presentEventDefinition(row, users, volume ? (volume.get(row.name) ?? 0) : null);
  };

  events.get('/:id', requireScopes('event_definition:read'), documented({ summary: 'Retrieve an event definition' }), async (req, res) => {
    const row = await store.getEvent(projectOf(req).id, uuidParam(req.params.id, 'Event definition'));
    if (!row) throw notFound(`Event definition ${req.params.id} does not exist.`);
    res.json(await presentOneEvent(req, row));
  });

  events.patch('/:id', requireScopes('event_definition:write'), documented({ summary: 'Update an event definition (description, tags, verified, hidden)', body: eventPatchSchema }), async (req, res) => {
    const id = uuidParam(req.params.id, 'Event definition');
    const changes = checkChanges(validateBody<DefinitionChanges>(eventPatchSchema, req));
    const row = await store.updateEvent(projectOf(req).id, id, changes, principalOf(req).userId);
    if (!row) throw notFound(`Event definition ${id} does not exist.`);
    res.json(await presentOneEvent(req, row));
  });

  // A definition deleted comes back once ingest sees its name again (within the hour an ingest process waits to refresh last_seen_at), as in PostHog.
  events.delete('/:id', requireScopes('event_definition:write'), documented({ summary: 'Delete an event definition' }), async (req, res) => {
    const id = uuidParam(req.params.id, 'Event definition');
    if (!(await store.delete('event_definitions', projectOf(req).id, id))) throw notFound(`Event definition ${id} does not exist.`);
    res.status(204).end();
  });

  const properties = Router({ mergeParams: true });
  properties.get('/', requireScopes('property_definition:read'), documented({ summary: 'List property definitions', query: propertyListQuery }), async (req, res) => {
    const page = pageOf(req);
    const query = validateQuery<{
      search?: string;
      type?: 'event' | 'person' | 'group';
      group_type_index?: number;
      properties?: string;
      is_numerical?: boolean;
      is_feature_flag?: boolean;
      event_names?: string;
      filter_by_event_names?: boolean;
      exclude_hidden?: boolean;
      excluded_properties?: string;
    }>(propertyListQuery, req);
    const type = query.type ?? 'event';
    if (type === 'group' && query.group_type_index === undefined) throw badRequest('`group_type_index` must be set for `group` type', 'group_type_index');
    if (type !== 'group' && query.group_type_index !== undefined) throw badRequest('`group_type_index` can only be set for `group` type', 'group_type_index');
    const excluded = validateJsonParam<string[]>(NAME_LIST, query.excluded_properties, 'excluded_properties') ?? [];
    const eventNames = validateJsonParam<string[]>(NAME_LIST, query.event_names, 'event_names');
    const names = query.properties ? validate<string[]>(NAME_LIST, query.properties.split(','), 'properties') : undefined;
    const { count, results } = await store.listProperties(
      projectOf(req).id,
      {
        search: query.search,
        type: type === 'event' ? 1 : type === 'person' ? 2 : 3,
        groupTypeIndex: query.group_type_index ?? null,
        names,
        numerical: query.is_numerical,
        featureFlag: query.is_feature_flag,
        eventNames: eventNames && eventNames.length > 0 ? eventNames : undefined,
        onlySeenOnEvents: query.filter_by_event_names ?? false,
        excludeHidden: query.exclude_hidden ?? false,
        excluded: type === 'event' ? [...excluded, ...HIDDEN_EVENT_PROPERTIES] : excluded,
      },
      page.limit,
      page.offset,
    );
    const users = await usersOf(store, results);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map((row) => presentPropertyDefinition(row, users)) });
  });

  properties.get('/:id', requireScopes('property_definition:read'), documented({ summary: 'Retrieve a property definition' }), async (req, res) => {
    const row = await store.getProperty(projectOf(req).id, uuidParam(req.params.id, 'Property definition'));
    if (!row) throw notFound(`Property definition ${req.params.id} does not exist.`);
    res.json(presentPropertyDefinition(row, await usersOf(store, [row])));
  });

  properties.patch(
    '/:id',
    requireScopes('property_definition:write'),
    documented({ summary: 'Update a property definition (description, tags, verified, hidden, property_type)', body: propertyPatchSchema }),
    async (req, res) => {
      const id = uuidParam(req.params.id, 'Property definition');
      const body = validateBody<DefinitionChanges & { property_type?: string | null }>(propertyPatchSchema, req);
      const row = await store.updateProperty(projectOf(req).id, id, { ...checkChanges(body), propertyType: body.property_type }, principalOf(req).userId);
      if (!row) throw notFound(`Property definition ${id} does not exist.`);
      res.json(presentPropertyDefinition(row, await usersOf(store, [row])));
    },
  );

  properties.delete('/:id', requireScopes('property_definition:write'), documented({ summary: 'Delete a property definition' }), async (req, res) => {
    const id = uuidParam(req.params.id, 'Property definition');
    if (!(await store.delete('property_definitions', projectOf(req).id, id))) throw notFound(`Property definition ${id} does not exist.`);
    res.status(204).end();
  });

  return { events, properties };
}
