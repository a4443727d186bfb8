import type { StoredPropertyFilter } from '@tributary/property-filters';

/**
 * An experiment's metrics in PostHog's ExperimentTrendsQuery / ExperimentFunnelsQuery shapes: a
 * count of one event per exposed person, or a funnel of events. Series are EventsNodes naming one
 * event, each with property filters, as is the query; each list holds at most MAX_METRICS, a
 * funnel at most MAX_STEPS.
 */
export const MAX_METRICS = 10;
export const MAX_STEPS = 10;

/** Property filters as PostHog writes them; checked where they become conditions (`propertyFilterExprs`). */
export type MetricFilters = StoredPropertyFilter[];

export interface MetricEventsNode {
  kind: 'EventsNode';
  event: string;
  name?: string;
  properties?: MetricFilters;
}

export interface MetricTrendsQuery {
  kind: 'TrendsQuery';
  series: [MetricEventsNode];
  properties?: MetricFilters;
}

/** `exposure_query`, when given, counts persons with its event (and the flag's variant on it) as exposed instead of `$feature_flag_called`. */
export interface ExperimentTrendsMetric {
  kind: 'ExperimentTrendsQuery';
  name?: string;
  count_query: MetricTrendsQuery;
  exposure_query?: MetricTrendsQuery;
}

export type FunnelWindowUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month';

export interface ExperimentFunnelsMetric {
  kind: 'ExperimentFunnelsQuery';
  name?: string;
  funnels_query: { kind: 'FunnelsQuery'; series: MetricEventsNode[]; properties?: MetricFilters; funnelsFilter?: { funnelWindowInterval?: number; funnelWindowIntervalUnit?: FunnelWindowUnit } };
}

export type ExperimentMetric = ExperimentTrendsMetric | ExperimentFunnelsMetric;

const filters = { type: 'array', maxItems: 50, items: { type: 'object' } } as const;

/**
 * A series' `math` is what the answer counts: events for a count (`total`), persons for an
 * exposure (`dau`). Any other is refused rather than counted as these.
 */
const eventsNode = (maths: readonly string[] = []) =>
  ({
    type: 'object',
    required: ['event'],
    properties: { kind: { const: 'EventsNode' }, event: { type: 'string', minLength: 1, maxLength: 400 }, name: { type: 'string', maxLength: 400 }, properties: filters, ...(maths.length > 0 && { math: { enum: maths } }) },
  }) as const;

const name = { type: 'string', maxLength: 400 } as const;

const trendsQuery = (math: string) => ({ type: 'object', required: ['series'], properties: { kind: { const: 'TrendsQuery' }, series: { type: 'array', minItems: 1, maxItems: 1, items: eventsNode([math]) }, properties: filters } }) as const;

const trendsMetric = { required: ['count_query'], properties: { name, count_query: trendsQuery('total'), exposure_query: trendsQuery('dau') } } as const;

const funnelsMetric = {
  required: ['funnels_query'],
  properties: {
    name,
    funnels_query: {
      type: 'object',
      required: ['series'],
      properties: {
        kind: { const: 'FunnelsQuery' },
        series: { type: 'array', minItems: 1, maxItems: MAX_STEPS, items: eventsNode() },
        properties: filters,
        funnelsFilter: {
          type: 'object',
          properties: {
            funnelWindowInterval: { type: 'integer', minimum: 1, maximum: 365 },
            funnelWindowIntervalUnit: { enum: ['second', 'minute', 'hour', 'day', 'week', 'month'] },
          },
        },
      },
    },
  },
} as const;

const metricSchema = {
  type: 'object',
  required: ['kind'],
  properties: { kind: { enum: ['ExperimentTrendsQuery', 'ExperimentFunnelsQuery'] } },
  allOf: [
    { if: { properties: { kind: { const: 'ExperimentTrendsQuery' } } }, then: trendsMetric },
    { if: { properties: { kind: { const: 'ExperimentFunnelsQuery' } } }, then: funnelsMetric },
  ],
} as const;

/**
 * The query endpoint's ExperimentTrendsQuery / ExperimentFunnelsQuery: a metric of the shape an
 * experiment stores, and the experiment (of the project) whose flag, variants and dates it reads.
 */
export const experimentQuerySchemas = Object.fromEntries(
  (
    [
      ['ExperimentTrendsQuery', trendsMetric],
      ['ExperimentFunnelsQuery', funnelsMetric],
    ] as const
  ).map(([kind, metric]) => [
    kind,
    {
      type: 'object',
      required: ['kind', 'experiment_id', ...metric.required],
      properties: { ...metric.properties, kind: { const: kind }, experiment_id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
    },
  ]),
);

export const metricsSchema = { type: 'array', maxItems: MAX_METRICS, items: metricSchema } as const;

const UNIT_SECONDS: Record<FunnelWindowUnit, number> = { second: 1, minute: 60, hour: 3600, day: 86_400, week: 604_800, month: 2_592_000 };

/** A funnel's conversion window in seconds: PostHog's default is 14 days. */
export function funnelWindowSeconds(metric: ExperimentFunnelsMetric): number {
  const filter = metric.funnels_query.funnelsFilter ?? {};
  return (filter.funnelWindowInterval ?? 14) * UNIT_SECONDS[filter.funnelWindowIntervalUnit ?? 'day'];
}
