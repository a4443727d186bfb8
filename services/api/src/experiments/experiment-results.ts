import { readCount, readFunnel, seededRandom, type BayesianReading } from '@tributary/experiments';
import type { CompactResult } from '@tributary/clickhouse';
import { parseSelect, type SelectLike } from '@tributary/hogql';
import { badRequest } from '@tributary/http';
import { funnelWindowSeconds, type ExperimentFunnelsMetric, type ExperimentMetric } from './experiment-metrics.js';
import type { ExperimentRow } from './experiment-store.js';

type RunQuery = (ast: SelectLike, values: Record<string, unknown>) => Promise<CompactResult>;

/** Whoever was in several variants, under `exclude` handling: shown by PostHog apart, and left out of the reading. */
export const MULTIPLE_VARIANT_KEY = '$multiple';

/** A `$feature_flag_called` of this experiment's flag answering one of its variants: an exposure. */
const EXPOSURE = "event = '$feature_flag_called' AND properties.$feature_flag = {flag_key} AND properties.$feature_flag_response IN {variants}";

/**
 * One row per person exposed in the experiment's dates: their first variant, how many variants
 * they were seen in, and `columns` over their events in those dates (exposures and `metricEvents`).
 */
const perPerson = (columns: string) => `SELECT person_id AS pid,
    argMinIf(properties.$feature_flag_response, timestamp, ${EXPOSURE}) AS first_variant,
    uniqExactIf(properties.$feature_flag_response, ${EXPOSURE}) AS variants_seen,
    ${columns}
  FROM events
  WHERE timestamp >= toDateTime({date_from}) AND timestamp <= toDateTime({date_to}) AND ((${EXPOSURE}) OR event IN {metric_events})
  GROUP BY pid
  HAVING variants_seen > 0`;

/** `exclude` puts persons seen in several variants under MULTIPLE_VARIANT_KEY; `first_seen` keeps them in their first. */
const variantOf = (row: ExperimentRow) =>
  row.exposure_criteria?.multiple_variant_handling === 'first_seen' ? 'first_variant' : `if(variants_seen > 1, {multiple}, first_variant)`;

/** Null outside exposures (no such property): aggregates skip rows with a null argument, so it is made 0. */
const EXPOSED_FLAG = `if(ifNull(${EXPOSURE}, 0), 1, 0)`;

/**
 * Metric events at or after the person's first exposure, per variant. 18.16's lambdas cannot read
 * a column, so the person's events are sorted as (time, is metric, is exposure) and a running count
 * of exposures marks the metric events that follow one.
 */
function countQuery(row: ExperimentRow): string {
  const after = 'arrayMap((seen, metric) -> if(seen > 0, metric, 0), arrayCumSum(arrayMap(e -> tupleElement(e, 3), timeline)), arrayMap(e -> tupleElement(e, 2), timeline))';
  return `SELECT ${variantOf(row)} AS variant, count() AS exposed, sum(arraySum(${after})) AS total
    FROM (${perPerson(`arraySort(groupArray(tuple(timestamp, if(event IN {metric_events}, 1, 0), ${EXPOSED_FLAG}))) AS timeline`)})
    GROUP BY variant`;
}

/** Persons who went from an exposure through every step, in order, within the conversion window, per variant. */
function funnelQuery(row: ExperimentRow, metric: ExperimentFunnelsMetric): string {
  const steps = metric.funnels_query.series.map((_, i) => `event = {step_${i}}`).join(', ');
  return `SELECT ${variantOf(row)} AS variant, count() AS exposed, countIf(level = ${metric.funnels_query.series.length + 1}) AS converted
    FROM (${perPerson(`windowFunnel(${funnelWindowSeconds(metric)})(timestamp, ${EXPOSED_FLAG} = 1, ${steps}) AS level`)})
    GROUP BY variant`;
}

const variantKeys = (row: ExperimentRow): string[] => (row.feature_flag?.filters.multivariate as { variants?: { key: string }[] } | undefined)?.variants?.map((v) => v.key) ?? [];

/** `YYYY-MM-DD hh:mm:ss` in UTC, which toDateTime reads on every release. */
const clickhouseTime = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/** The experiment's dates as the query reads them: its start to its end, or to now while it runs. */
function period(row: ExperimentRow, now: Date): { date_from: string; date_to: string } {
  if (!row.start_date) throw badRequest('The experiment has not started: set its start_date to read results.', 'start_date', 'experiment_not_started');
  return { date_from: clickhouseTime(row.start_date), date_to: clickhouseTime(row.end_date ?? now) };
}

/** A fixed seed: the same counts read the same chance to win on every request. */
const SEED = 0x5eed;

interface VariantCounts {
  exposed: number;
  value: number;
}

/** The metric's counts per variant (every flag variant, zero where no one was exposed), and those in several variants. */
async function variantCounts(row: ExperimentRow, metric: ExperimentMetric, run: RunQuery, now: Date): Promise<{ keys: string[]; counts: Map<string, VariantCounts> }> {
  const keys = variantKeys(row);
  const funnel = metric.kind === 'ExperimentFunnelsQuery';
  const series = funnel ? metric.funnels_query.series : metric.count_query.series;
  const values: Record<string, unknown> = {
    flag_key: row.feature_flag!.key,
    variants: keys,
    multiple: MULTIPLE_VARIANT_KEY,
    metric_events: series.map((s) => s.event),
    ...Object.fromEntries(series.map((s, i) => [`step_${i}`, s.event])),
    ...period(row, now),
  };
  const result = await run(await parseSelect(funnel ? funnelQuery(row, metric) : countQuery(row)), values);
  const counts = new Map<string, VariantCounts>(keys.map((key) => [key, { exposed: 0, value: 0 }]));
  for (const [variant, exposed, value] of result.data) counts.set(String(variant), { exposed: Number(exposed), value: Number(value) });
  return { keys, counts };
}

const withoutExpectedLoss = ({ expected_loss: _, ...reading }: BayesianReading) => reading;

/** A metric's results in PostHog's ExperimentTrendsQueryResponse / ExperimentFunnelsQueryResponse shapes. */
export async function experimentResults(row: ExperimentRow, metric: ExperimentMetric, run: RunQuery, now: Date) {
  if (!row.feature_flag) throw badRequest('The experiment\'s feature flag was deleted: it has no exposures to read.', 'feature_flag');
  const { keys, counts } = await variantCounts(row, metric, run, now);
  const of = (key: string) => counts.get(key)!;
  const random = seededRandom(SEED);
  const common = { stats_version: 2, is_cached: false, last_refresh: now.toISOString(), excluded_multiple_variant_count: counts.get(MULTIPLE_VARIANT_KEY)?.exposed ?? 0 };
  if (metric.kind === 'ExperimentFunnelsQuery') {
    const variants = keys.map((key) => ({ key, success_count: of(key).value, failure_count: of(key).exposed - of(key).value }));
    const reading = readFunnel(variants[0]!, variants.slice(1), random);
    return { kind: 'ExperimentFunnelsQuery', variants, ...reading, ...common };
  }
  const controlExposure = of(keys[0]!).exposed;
  const variants = keys.map((key) => ({ key, count: of(key).value, absolute_exposure: of(key).exposed, exposure: controlExposure === 0 ? 0 : of(key).exposed / controlExposure }));
  const reading = readCount(variants[0]!, variants.slice(1), random);
  // PostHog's trends answer carries the expected loss as its p_value (1 when there is no verdict).
  return { kind: 'ExperimentTrendsQuery', variants, ...withoutExpectedLoss(reading), p_value: reading.expected_loss, ...common };
}
