import { MAX_QUERY_LENGTH, PERSONS_ON_EVENTS_MODES } from '@tributary/hogql';
import { experimentQuerySchemas } from '../experiments/experiment-metrics.js';
import { TRENDS_MATHS } from './insights/trends/trends-query.js';
import { MAX_PATH_EDGES, MAX_PATH_STEPS, PATH_TYPES } from './insights/paths/paths-query.js';
import { WEB_BREAKDOWNS, WEB_STATS_LIMIT_MAX } from './insights/web-analytics/web-stats-table-query.js';

/** What every kind may carry (PostHog's DataNode fields): of the modifiers only `personsOnEventsMode` is acted on, the rest are taken and ignored. */
const dataNode = {
  modifiers: {
    type: 'object',
    properties: {
      personsOnEventsMode: { enum: [...PERSONS_ON_EVENTS_MODES], description: `must be one of ${PERSONS_ON_EVENTS_MODES.join(', ')}` },
    },
  },
  tags: { type: 'object' },
};
const propertyFilters = {
  type: 'array',
  items: { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1 }, operator: { type: 'string' }, type: { type: 'string' } } },
};
/** PostHog's InsightsQueryBase field: the share of persons read, 0 excluded, 1 being every event. */
const samplingFactor = { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 1 };
const dateRange = { type: 'object', properties: { date_from: { type: ['string', 'null'], maxLength: 64 }, date_to: { type: ['string', 'null'], maxLength: 64 } } };

const eventsNode = {
  type: 'object',
  required: ['kind'],
  properties: {
    kind: { enum: ['EventsNode', 'ActionsNode'], description: 'must be EventsNode or ActionsNode (data warehouse series are not supported yet)' },
    event: { type: ['string', 'null'] },
    // An ActionsNode's action: one of the project's, by id.
    id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    name: { type: ['string', 'null'] },
    custom_name: { type: ['string', 'null'] },
    properties: propertyFilters,
  },
  if: { properties: { kind: { const: 'ActionsNode' } } },
  then: { required: ['id'] },
};

const hogqlQuerySchema = {
  type: 'object',
  required: ['kind', 'query'],
  properties: {
    kind: { const: 'HogQLQuery' },
    query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_LENGTH },
    values: { type: 'object' },
    name: { type: 'string' },
    ...dataNode,
  },
};

const expressions = { type: 'array', items: { type: 'string', minLength: 1, maxLength: MAX_QUERY_LENGTH }, maxItems: 100 };
const eventsQuerySchema = {
  type: 'object',
  required: ['kind', 'select'],
  properties: {
    kind: { const: 'EventsQuery' },
    select: expressions,
    where: expressions,
    orderBy: expressions,
    event: { type: ['string', 'null'] },
    events: { type: ['array', 'null'], items: { type: 'string' } },
    properties: propertyFilters,
    after: { type: 'string' },
    before: { type: 'string' },
    limit: { type: 'integer', minimum: 1 },
    offset: { type: 'integer', minimum: 0 },
    personId: { type: 'string' },
    ...dataNode,
  },
};

const trendsQuerySchema = {
  type: 'object',
  required: ['kind', 'series'],
  properties: {
    kind: { const: 'TrendsQuery' },
    samplingFactor,
    series: {
      type: 'array',
      minItems: 1,
      // Formulas name series by letter, A to Z.
      maxItems: 26,
      items: {
        ...eventsNode,
        properties: {
          ...eventsNode.properties,
          math: { type: ['string', 'null'], enum: [...TRENDS_MATHS, null] },
          math_property: { type: ['string', 'null'], minLength: 1 },
          math_group_type_index: { type: ['integer', 'null'], minimum: 0, maximum: 4 },
        },
      },
    },
    interval: { type: 'string', enum: ['hour', 'day', 'week', 'month'] },
    dateRange,
    properties: propertyFilters,
    breakdownFilter: {
      type: 'object',
      properties: {
        breakdown: { type: ['string', 'null'], maxLength: 400 },
        breakdown_type: { type: ['string', 'null'], enum: ['event', 'person', 'group', null] },
        breakdown_group_type_index: { type: ['integer', 'null'], minimum: 0, maximum: 4 },
        breakdown_limit: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    compareFilter: { type: 'object', properties: { compare: { type: ['boolean', 'null'] } } },
    trendsFilter: { type: 'object', properties: { formula: { type: ['string', 'null'], maxLength: 1000 }, display: { type: ['string', 'null'] } } },
    ...dataNode,
  },
};

/** Stickiness and lifecycle: a series of events over intervals of a date range. */
function seriesQuerySchema(kind: string, intervals: string[], maxSeries: number) {
  return {
    type: 'object',
    required: ['kind', 'series'],
    properties: {
      kind: { const: kind },
    samplingFactor,
      series: { type: 'array', minItems: 1, maxItems: maxSeries, items: eventsNode },
      interval: { type: 'string', enum: intervals },
      dateRange,
      properties: propertyFilters,
      ...dataNode,
    },
  };
}

const retentionEntity = {
  type: 'object',
  // An event by name, or an action by id (`type: 'actions'`), as PostHog's RetentionEntity.
  properties: { id: { type: ['string', 'integer', 'null'] }, event: { type: ['string', 'null'] }, type: { enum: ['events', 'actions'] }, kind: { enum: ['EventsNode', 'ActionsNode'] }, name: { type: 'string' } },
};
const retentionQuerySchema = {
  type: 'object',
  required: ['kind', 'retentionFilter'],
  properties: {
    kind: { const: 'RetentionQuery' },
    samplingFactor,
    retentionFilter: {
      type: 'object',
      properties: {
        targetEntity: retentionEntity,
        returningEntity: retentionEntity,
        retentionType: { type: 'string', enum: ['retention_first_time', 'retention_recurring'] },
        totalIntervals: { type: 'integer', minimum: 1, maximum: 100 },
        period: { type: 'string', enum: ['Day', 'Week', 'Month'] },
      },
    },
    dateRange,
    properties: propertyFilters,
    ...dataNode,
  },
};

const funnelsQuerySchema = {
  type: 'object',
  required: ['kind', 'series'],
  properties: {
    kind: { const: 'FunnelsQuery' },
    samplingFactor,
    series: { type: 'array', minItems: 2, maxItems: 20, items: eventsNode },
    dateRange,
    properties: propertyFilters,
    breakdownFilter: trendsQuerySchema.properties.breakdownFilter,
    funnelsFilter: {
      type: 'object',
      properties: {
        funnelOrderType: { type: 'string', enum: ['ordered', 'strict', 'unordered'] },
        funnelVizType: { type: 'string', enum: ['steps', 'trends', 'time_to_convert'] },
        funnelWindowInterval: { type: 'integer', minimum: 1, maximum: 10_000 },
        funnelWindowIntervalUnit: { type: 'string', enum: ['second', 'minute', 'hour', 'day', 'week', 'month'] },
        exclusions: {
          type: 'array',
          maxItems: 20,
          items: {
            type: 'object',
            required: ['funnelFromStep', 'funnelToStep'],
            properties: { ...eventsNode.properties, funnelFromStep: { type: 'integer', minimum: 0 }, funnelToStep: { type: 'integer', minimum: 0 } },
            if: eventsNode.if,
            then: eventsNode.then,
          },
        },
      },
    },
    aggregation_group_type_index: { type: ['integer', 'null'] },
    ...dataNode,
  },
};

const nullable = (schema: { type: string } & Record<string, unknown>) => ({ ...schema, type: [schema.type, 'null'] });
const pathsQuerySchema = {
  type: 'object',
  required: ['kind'],
  properties: {
    kind: { const: 'PathsQuery' },
    samplingFactor,
    pathsFilter: {
      type: 'object',
      properties: {
        includeEventTypes: nullable({ type: 'array', maxItems: PATH_TYPES.length, items: { enum: [...PATH_TYPES] } }),
        pathsHogQLExpression: nullable({ type: 'string', maxLength: 1000 }),
        startPoint: nullable({ type: 'string', maxLength: 2000 }),
        endPoint: nullable({ type: 'string', maxLength: 2000 }),
        stepLimit: nullable({ type: 'integer', minimum: 1, maximum: MAX_PATH_STEPS }),
        pathGroupings: nullable({ type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 400 } }),
        // Bounded together so the printed statement stays within ClickHouse's max_query_size at every maximum.
        excludeEvents: nullable({ type: 'array', maxItems: 100, items: { type: 'string', maxLength: 400 } }),
        // Cleaning rules are tenant patterns ClickHouse runs on every step: few, and short.
        localPathCleaningFilters: nullable({
          type: 'array',
          maxItems: 30,
          items: { type: 'object', properties: { alias: nullable({ type: 'string', maxLength: 400 }), regex: nullable({ type: 'string', maxLength: 500 }), order: nullable({ type: 'number' }) } },
        }),
        pathReplacements: nullable({ type: 'boolean' }),
        edgeLimit: nullable({ type: 'integer', minimum: 1, maximum: MAX_PATH_EDGES }),
        minEdgeWeight: nullable({ type: 'integer', minimum: 0 }),
        maxEdgeWeight: nullable({ type: 'integer', minimum: 0 }),
        pathStartKey: nullable({ type: 'string' }),
        pathEndKey: nullable({ type: 'string' }),
        pathDropoffKey: nullable({ type: 'string' }),
      },
    },
    funnelPathsFilter: nullable({ type: 'object' }),
    dateRange,
    properties: propertyFilters,
    filterTestAccounts: nullable({ type: 'boolean' }),
    aggregation_group_type_index: { type: ['integer', 'null'] },
    ...dataNode,
  },
};

const stickinessQuerySchema = seriesQuerySchema('StickinessQuery', ['hour', 'day', 'week', 'month'], 26);
const lifecycleQuerySchema = seriesQuerySchema('LifecycleQuery', ['day', 'week', 'month'], 1);

/** A source held to its own kind's schema, chosen by `kind`, so an error names the field, not every alternative. */
function sourceOf(schemas: Record<string, object>) {
  const kinds = Object.keys(schemas);
  return {
    type: 'object',
    required: ['kind'],
    properties: { kind: { enum: kinds, description: `must be one of ${kinds.join(', ')}` } },
    allOf: Object.entries(schemas).map(([kind, schema]) => ({ if: { properties: { kind: { const: kind } } }, then: schema })),
  };
}

const breakdownValue = { type: ['string', 'integer', 'array', 'null'], maxLength: 400, maxItems: 1, items: { type: ['string', 'integer'], maxLength: 400 } };
const insightActorsQuerySchema = {
  type: 'object',
  required: ['kind', 'source'],
  properties: {
    kind: { const: 'InsightActorsQuery' },
    source: sourceOf({ TrendsQuery: trendsQuerySchema, StickinessQuery: stickinessQuerySchema, LifecycleQuery: lifecycleQuerySchema, RetentionQuery: retentionQuerySchema }),
    day: { type: ['string', 'integer', 'null'], maxLength: 64 },
    status: { type: ['string', 'null'], enum: ['new', 'returning', 'resurrecting', 'dormant', null] },
    interval: { type: ['integer', 'null'], minimum: 0 },
    series: { type: ['integer', 'null'], minimum: 0 },
    breakdown: breakdownValue,
    compare: { type: ['string', 'null'], enum: ['current', 'previous', null] },
    includeRecordings: { type: ['boolean', 'null'] },
    ...dataNode,
  },
};
const funnelsActorsQuerySchema = {
  type: 'object',
  required: ['kind', 'source', 'funnelStep'],
  properties: {
    kind: { const: 'FunnelsActorsQuery' },
    source: funnelsQuerySchema,
    funnelStep: { type: 'integer', not: { const: 0 }, description: 'a step from 1 (converted) or from -2 (dropped off before it); 0 is no step' },
    funnelStepBreakdown: breakdownValue,
    includeRecordings: { type: ['boolean', 'null'] },
    ...dataNode,
  },
};
const actorsQuerySchema = {
  type: 'object',
  required: ['kind'],
  properties: {
    kind: { const: 'ActorsQuery' },
    source: { ...sourceOf({ InsightActorsQuery: insightActorsQuerySchema, FunnelsActorsQuery: funnelsActorsQuerySchema }), type: ['object', 'null'] },
    select: { type: ['array', 'null'], maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 400 } },
    orderBy: { type: ['array', 'null'], maxItems: 5, items: { type: 'string', maxLength: 100 } },
    search: { type: ['string', 'null'], maxLength: 400 },
    limit: { type: ['integer', 'null'], minimum: 1 },
    offset: { type: ['integer', 'null'], minimum: 0, maximum: 10_000_000 },
    properties: { type: ['array', 'null'] },
    ...dataNode,
  },
};

/** What both web analytics kinds take: a range, property filters, and whether to compare with the period before. */
const webAnalyticsProperties = {
  dateRange,
  properties: propertyFilters,
  compareFilter: nullable({ type: 'object', properties: { compare: { type: ['boolean', 'null'] }, compare_to: { type: ['string', 'null'] } } }),
  compare: nullable({ type: 'boolean' }),
  filterTestAccounts: nullable({ type: 'boolean' }),
  sampling: nullable({ type: 'object' }),
  conversionGoal: { type: 'null', description: 'conversion goals are not supported yet' },
  ...dataNode,
};
const webOverviewQuerySchema = { type: 'object', required: ['kind'], properties: { kind: { const: 'WebOverviewQuery' }, ...webAnalyticsProperties } };
const webStatsTableQuerySchema = {
  type: 'object',
  required: ['kind', 'breakdownBy'],
  properties: {
    kind: { const: 'WebStatsTableQuery' },
    breakdownBy: { enum: [...WEB_BREAKDOWNS], description: `one of ${WEB_BREAKDOWNS.join(', ')}` },
    limit: nullable({ type: 'integer', minimum: 1, maximum: WEB_STATS_LIMIT_MAX }),
    includeBounceRate: nullable({ type: 'boolean' }),
    includeScrollDepth: nullable({ type: 'boolean' }),
    doPathCleaning: nullable({ type: 'boolean' }),
    orderBy: nullable({ type: 'array' }),
    ...webAnalyticsProperties,
  },
};

/** The query kinds the endpoint runs, each with the schema its request is held to. */
export const QUERY_SCHEMAS: Record<string, object> = {
  HogQLQuery: hogqlQuerySchema,
  EventsQuery: eventsQuerySchema,
  TrendsQuery: trendsQuerySchema,
  FunnelsQuery: funnelsQuerySchema,
  StickinessQuery: stickinessQuerySchema,
  LifecycleQuery: lifecycleQuerySchema,
  RetentionQuery: retentionQuerySchema,
  PathsQuery: pathsQuerySchema,
  ...experimentQuerySchemas,
  ActorsQuery: actorsQuerySchema,
  InsightActorsQuery: insightActorsQuerySchema,
  FunnelsActorsQuery: funnelsActorsQuerySchema,
  WebOverviewQuery: webOverviewQuerySchema,
  WebStatsTableQuery: webStatsTableQuerySchema,
};
export const QUERY_KINDS = Object.keys(QUERY_SCHEMAS);
