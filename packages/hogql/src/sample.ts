import type { Constant, JoinExpr, RatioExpr, SampleExpr, SelectLike } from './ast.js';
import { queryError, spanOf as span } from './errors.js';

/**
 * HogQL's `SAMPLE` on events, printed as a range of a hash of the event's stored person id (the
 * person at ingestion, PostHog's person-on-events). ClickHouse's own SAMPLE needs a sampling key
 * in the table's sorting key; ours sorts by the distinct id's hash, and a person's distinct ids hash
 * apart, so sampling by it would split persons (a funnel's anonymous first step from its
 * identified last one, and every person counted once per distinct id in the sample). Keyed by the
 * person, a person's events are all in the sample or all out, in every query and insight kind.
 * `SAMPLE k OFFSET m` keeps the events whose key falls in [m, m + k) of the hash's range, as
 * ClickHouse's SAMPLE does, so `SAMPLE 1/2` and `SAMPLE 1/2 OFFSET 1/2` split the events in two.
 */

const HASH_RANGE = 1n << 64n;

/** The part of the sampling key's range a SAMPLE keeps: `from` <= key < `to`. */
export interface SampleRange {
  from: bigint;
  to: bigint;
}

/** The sampling key, as ClickHouse SQL over an events table's alias: 18.16 hashes no UUID, so its text. */
export const sampleKey = (alias: string): string => `cityHash64(toString(${alias}.person_id))`;

/** The exact fraction a number's decimal text writes, so 0.1 keeps exactly a tenth of the range. */
function exactFraction(value: number): [bigint, bigint] {
  const [mantissa = '0', exponent = '0'] = String(value).split('e');
  const [whole = '0', decimals = ''] = mantissa.split('.');
  let numerator = BigInt(whole + decimals);
  let denominator = 10n ** BigInt(decimals.length);
  const power = Number(exponent);
  if (power >= 0) numerator *= 10n ** BigInt(power);
  else denominator *= 10n ** BigInt(-power);
  return [numerator, denominator];
}

function ratio(node: RatioExpr, what: string): [bigint, bigint] {
  const value = (side: Constant) => {
    if (typeof side.value !== 'number' || !Number.isFinite(side.value) || side.value < 0) throw queryError(`SAMPLE ${what} must be a number from 0 to 1, or a fraction such as 1/10`, span(node));
    return exactFraction(side.value);
  };
  const [n1, d1] = value(node.left);
  if (!node.right) return [n1, d1];
  const [n2, d2] = value(node.right);
  if (n2 === 0n) throw queryError(`SAMPLE ${what} divides by zero`, span(node));
  return [n1 * d2, d1 * n2];
}

/** The range `SAMPLE k OFFSET m` keeps; a number of rows (`SAMPLE 1000`) is refused, as the key's range is not rows. */
export function sampleRange(sample: SampleExpr): SampleRange {
  const [n, d] = ratio(sample.sample_value, 'value');
  if (n === 0n || n > d) throw queryError('SAMPLE takes the share of events to keep, above 0 and at most 1 (SAMPLE 0.1, SAMPLE 1/10 OFFSET 1/2); a number of rows is not supported', span(sample));
  const [on, od] = sample.offset_value ? ratio(sample.offset_value, 'OFFSET') : [0n, 1n];
  if (on >= od) throw queryError('SAMPLE OFFSET must be below 1', span(sample));
  const from = (HASH_RANGE * on) / od;
  const to = (HASH_RANGE * (on * d + n * od)) / (od * d);
  return { from, to: to > HASH_RANGE ? HASH_RANGE : to };
}

/** The condition a SAMPLE adds on events under `alias`; none when it keeps the whole range. */
export function sampleCondition(range: SampleRange, alias: string): string | null {
  const key = sampleKey(alias);
  const bounds = [...(range.from > 0n ? [`${key} >= ${range.from}`] : []), ...(range.to < HASH_RANGE ? [`${key} < ${range.to}`] : [])];
  return bounds.length ? bounds.join(' AND ') : null;
}

/**
 * The query with `SAMPLE factor` on every read of events in its FROM clauses, subqueries' and
 * joins' included, that has none: what an insight's `samplingFactor` asks. Subqueries in
 * conditions (cohorts, filters) decide who is counted and are read whole.
 */
export function withSample<T extends SelectLike>(query: T, factor: number): T {
  const sample: SampleExpr = { node: 'SampleExpr', sample_value: { node: 'RatioExpr', left: { node: 'Constant', value: factor } } };
  const join = (expr: JoinExpr): JoinExpr => {
    const table = expr.table;
    const sampled = table.node === 'SelectQuery' || table.node === 'SelectSetQuery' ? withSample(table, factor) : table;
    const isEvents = table.node === 'Field' && table.chain.length === 1 && table.chain[0] === 'events';
    return { ...expr, table: sampled, ...(isEvents && !expr.sample && { sample }), ...(expr.next_join && { next_join: join(expr.next_join) }) };
  };
  if (query.node === 'SelectSetQuery') {
    return {
      ...query,
      initial_select_query: withSample(query.initial_select_query, factor),
      subsequent_select_queries: query.subsequent_select_queries.map((next) => ({ ...next, select_query: withSample(next.select_query, factor) })),
    };
  }
  return query.select_from ? { ...query, select_from: join(query.select_from) } : query;
}
