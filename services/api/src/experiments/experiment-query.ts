import { MAX_VARIANTS, readCount, readFunnel, seededRandom } from '@tributary/experiments';
import type { CompactResult } from '@tributary/clickhouse';
import { parseSelect, propertyFilterExprs, replaceNodes, type Expr, type FilterContext, type SelectLike } from '@tributary/hogql';
import { badRequest } from '@tributary/http';
import { funnelWindowSeconds, type ExperimentFunnelsMetric, type ExperimentTrendsMetric, type MetricFilters } from './experiment-metrics.js';
import type { ExperimentRow } from './experiment-store.js';

export type RunQuery = (ast: SelectLike, values: Record<string, unknown>) => Promise<CompactResult>;

/** PostHog's ExperimentTrendsQuery / ExperimentFunnelsQuery: a metric, and the experiment whose flag, variants and dates it reads. */
export type ExperimentQueryRequest = (ExperimentTrendsMetric | ExperimentFunnelsMetric) & { experiment_id: number };

export const isExperimentKind = (kind: string): kind is ExperimentQueryRequest['kind'] => kind === 'ExperimentTrendsQuery' || kind === 'ExperimentFunnelsQuery';

/**
 * The variant an event was sent under: SDKs put every flag's value on each event as
 * `$feature/<key>`. A flag's key is letters, digits, `_` and `-`, so it is written into the
 * query as it is; a placeholder would read a column, not a property.
 */
function variantProperty(flagKey: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(flagKey)) throw badRequest(`The experiment's flag key ${JSON.stringify(flagKey)} cannot name a property.`, 'experiment_id');
  return `properties['$feature/${flagKey}']`;
}

/**
 * Persons are counted by their id's text: 18.16 aggregates a UUID key badly when ids share their
 * high bits, as the bench datasets' do (bench/README.md).
 */
const PERSON = 'toString(person_id)';

/** Conditions on a property are null where it is absent: made false, so the aggregates' conditions are never null. */
const known = (condition: string) => `ifNull(${condition}, 0)`;

/** Property filters as one HogQL condition (true without any), resolved and guarded by the printer like a client's query. */
function matching(filters: readonly (MetricFilters | undefined)[], context: FilterContext): Expr {
  const all = filters.flatMap((f) => f ?? []);
  return all.length === 0 ? { node: 'Constant', value: 1 } : { node: 'And', exprs: propertyFilterExprs(all, context) };
}

/** A statement's text, with `{filter_*}` placeholders where the filters' conditions go as trees. */
interface Statement {
  text: string;
  filters: Record<string, Expr>;
}

/**
 * The statement's tree with each filter placeholder replaced by its condition's tree. The
 * conditions are never printed and parsed again: the parser's time grows steeply with nesting,
 * and a client's filters nested inside the funnel's aggregates once held the api for minutes.
 */
async function statementTree({ text, filters }: Statement): Promise<SelectLike> {
  return replaceNodes(await parseSelect(text), (node) => {
    const name = node.node === 'Placeholder' && (node.expr as Expr).node === 'Field' ? String((node.expr as { chain: unknown[] }).chain[0]) : null;
    return name !== null && Object.hasOwn(filters, name) ? filters[name] : undefined;
  });
}

const inDates = 'timestamp >= toDateTime({date_from}) AND timestamp <= toDateTime({date_to})';

/**
 * Per variant, the metric's events sent under it and the persons exposed to it, in the
 * experiment's dates. Exposure is a `$feature_flag_called` of the flag answering a variant (read
 * from `$feature_flag_response`), or the `exposure_query`'s event sent under a variant. Each part
 * reads only its own event's rows (the key orders by event), and only the exposures look persons
 * up, the larger part of the cost when every metric event was joined to its person.
 */
function trendsQuery(request: ExperimentTrendsMetric, variant: string, context: FilterContext): Statement {
  const custom = request.exposure_query;
  const exposure = custom
    ? { variant, where: `event = {exposure_event} AND ${variant} IN {variants} AND {filter_exposure}` }
    : { variant: 'properties.$feature_flag_response', where: "event = '$feature_flag_called' AND properties.$feature_flag = {flag_key} AND properties.$feature_flag_response IN {variants}" };
  const text = `SELECT variant, sum(count) AS count, sum(exposure) AS exposure FROM (
      SELECT ${variant} AS variant, count() AS count, 0 AS exposure FROM events WHERE ${inDates} AND event = {metric_event} AND ${variant} IN {variants} AND {filter_metric} GROUP BY variant
      UNION ALL
      SELECT ${exposure.variant} AS variant, 0 AS count, uniqExact(${PERSON}) AS exposure FROM events WHERE ${inDates} AND ${exposure.where} GROUP BY variant)
    GROUP BY variant`;
  return {
    text,
    filters: {
      filter_metric: matching([request.count_query.series[0].properties, request.count_query.properties], context),
      ...(custom && { filter_exposure: matching([custom.series[0].properties, custom.properties], context) }),
    },
  };
}

/**
 * One pass over the steps' events in the experiment's dates, as PostHog's funnel broken down by
 * `$feature/<key>`: a person enters with a first step sent under a variant, is counted in the
 * variant of their first such step, and reaches each later step in order within the window.
 */
function funnelQuery(request: ExperimentFunnelsMetric, variant: string, context: FilterContext): Statement {
  const steps = request.funnels_query.series;
  const entry = known(`event = {step_0} AND ${variant} IN {variants} AND {filter_step_0}`);
  const later = steps.slice(1).map((_, i) => known(`event = {step_${i + 1}} AND {filter_step_${i + 1}}`));
  const reached = steps.map((_, i) => `countIf(level >= ${i + 1}) AS step_${i + 1}`).join(', ');
  const text = `SELECT variant, ${reached}
    FROM (SELECT ${PERSON} AS pid, argMinIf(${variant}, timestamp, ${entry}) AS variant, windowFunnel(${funnelWindowSeconds(request)})(timestamp, ${[entry, ...later].map((c) => `${c} = 1`).join(', ')}) AS level
      FROM events
      WHERE ${inDates} AND event IN {events} AND {filter_where}
      GROUP BY pid
      HAVING level > 0)
    GROUP BY variant`;
  const filters: Record<string, Expr> = { filter_where: matching([request.funnels_query.properties], context) };
  steps.forEach((step, i) => (filters[`filter_step_${i}`] = matching([step.properties], context)));
  return { text, filters };
}

const variantKeys = (row: ExperimentRow): string[] => (row.feature_flag?.filters.multivariate as { variants?: { key: string }[] } | undefined)?.variants?.map((v) => v.key) ?? [];

/** `YYYY-MM-DD hh:mm:ss` in UTC, which toDateTime reads on every release. */
const clickhouseTime = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/** The experiment's dates: its start to its end, or to now while it runs. */
function period(row: ExperimentRow, now: Date): { from: Date; to: Date } {
  if (!row.start_date) throw badRequest('The experiment has not started: set its start_date to read results.', 'start_date', 'experiment_not_started');
  return { from: row.start_date, to: row.end_date ?? now };
}

/** A fixed seed: the same counts read the same chance to win on every request. */
const SEED = 0x5eed;

const exact = (key: string, value: string[]) => ({ key, value, operator: 'exact', type: 'event' });

/** A series query as PostHog's runner prepares it for the experiment: its dates, broken down by `breakdown`, limited by `properties`. */
function prepared(query: object, dates: { from: Date; to: Date }, breakdown: string, properties: object[], extra: object = {}) {
  return {
    ...query,
    ...extra,
    dateRange: { date_from: dates.from.toISOString(), date_to: dates.to.toISOString(), explicitDate: true },
    breakdownFilter: { breakdown, breakdown_type: 'event' },
    properties,
  };
}

const CUMULATIVE = { trendsFilter: { display: 'ActionsLineGraphCumulative' } };

/** The default exposure as PostHog writes it: persons with a `$feature_flag_called`, by the variant it answered. */
const DEFAULT_EXPOSURE_QUERY = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$feature_flag_called', math: 'dau' }] };

/** An ExperimentTrendsQuery or ExperimentFunnelsQuery read for the experiment `row`, in PostHog's response shapes. */
export async function runExperimentQuery(request: ExperimentQueryRequest, row: ExperimentRow, run: RunQuery, context: FilterContext): Promise<object> {
  const now = context.now;
  if (!row.feature_flag) throw badRequest("The experiment's feature flag was deleted: it has no exposures to read.", 'experiment_id');
  const flagKey = row.feature_flag.key;
  const keys = variantKeys(row);
  // The flag may have been changed since the experiment was made.
  if (keys.length < 2 || keys.length > MAX_VARIANTS) throw badRequest(`The experiment's flag has ${keys.length} variants: a reading compares 2 to ${MAX_VARIANTS}.`, 'experiment_id');
  const dates = period(row, now);
  const variant = variantProperty(flagKey);
  const breakdown = `$feature/${flagKey}`;
  const values = { flag_key: flagKey, variants: keys, date_from: clickhouseTime(dates.from), date_to: clickhouseTime(dates.to) };
  const random = seededRandom(SEED);
  const ofVariant = (data: unknown[][]) => new Map(data.map((r) => [String(r[0]), r.slice(1).map(Number)]));

  if (request.kind === 'ExperimentFunnelsQuery') {
    const steps = request.funnels_query.series;
    const stepValues = Object.fromEntries(steps.map((s, i) => [`step_${i}`, s.event]));
    const result = await run(await statementTree(funnelQuery(request, variant, context)), { ...values, ...stepValues, events: [...new Set(steps.map((s) => s.event))] });
    const reached = ofVariant(result.data);
    const counts = (key: string) => reached.get(key) ?? steps.map(() => 0);
    const variants = keys.map((key) => ({ key, success_count: counts(key).at(-1)!, failure_count: counts(key)[0]! - counts(key).at(-1)! }));
    const { expected_loss, ...reading } = readFunnel(variants[0]!, variants.slice(1), random);
    const insight = keys.map((key) =>
      steps.map((s, order) => ({ action_id: s.event, name: s.event, custom_name: s.name ?? null, order, count: counts(key)[order]!, breakdown: [key], breakdown_value: [key] })),
    );
    const funnels_query = prepared(request.funnels_query, dates, breakdown, [exact(breakdown, keys)], { funnelsFilter: { ...request.funnels_query.funnelsFilter, layout: 'vertical' } });
    return { kind: 'ExperimentFunnelsQuery', funnels_query, insight, variants, ...reading, expected_loss, stats_version: 2 };
  }

  const metricEvent = request.count_query.series[0].event;
  const exposureEvent = request.exposure_query?.series[0].event;
  const result = await run(await statementTree(trendsQuery(request, variant, context)), { ...values, metric_event: metricEvent, ...(exposureEvent && { exposure_event: exposureEvent }) });
  const read = ofVariant(result.data);
  const [count, exposed] = [(key: string) => read.get(key)?.[0] ?? 0, (key: string) => read.get(key)?.[1] ?? 0];
  const controlExposure = exposed(keys[0]!);
  const variants = keys.map((key) => ({ key, count: count(key), exposure: controlExposure === 0 ? 0 : exposed(key) / controlExposure, absolute_exposure: exposed(key) }));
  const { expected_loss, ...reading } = readCount(variants[0]!, variants.slice(1), random);
  const insight = keys.map((key) => ({ action: { id: metricEvent, type: 'events', name: metricEvent }, label: metricEvent, breakdown_value: key, count: count(key), aggregated_value: count(key) }));
  const count_query = prepared(request.count_query, dates, breakdown, [exact(breakdown, keys)], CUMULATIVE);
  const exposure_query = request.exposure_query
    ? prepared(request.exposure_query, dates, breakdown, [exact(breakdown, keys)], CUMULATIVE)
    : prepared(DEFAULT_EXPOSURE_QUERY, dates, '$feature_flag_response', [exact('$feature_flag_response', keys), exact('$feature_flag', [flagKey])], CUMULATIVE);
  // PostHog's trends answer carries the expected loss as its p_value (1 when there is no verdict).
  return { kind: 'ExperimentTrendsQuery', count_query, exposure_query, insight, variants, ...reading, p_value: expected_loss, stats_version: 2 };
}
