import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, type ClickHouse } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, eventRow } from '@tributary/test-support';
import type { Fixture } from './fixture.js';
import {
  referenceFunnels,
  referenceLifecycle,
  referenceRetention,
  referenceStickiness,
  referenceTrends,
  type FunnelsRequest,
  type LifecycleRequest,
  type RetentionRequest,
  type StickinessRequest,
  type TrendsRequest,
  type PropertyFilter,
  type TrendsSeries,
  type World,
} from './reference.js';

/**
 * The oracle's questions (every insight kind, each interval and math, in UTC and America/New_York)
 * and how an answer is compared with the reference: shared by the run on the stack's ClickHouse
 * 18.16 through the endpoint (`insights-oracle.integration.test.ts`) and the run on ClickHouse 26
 * (`insights-oracle-chdb.test.ts`), so both engines answer the same questions alike.
 */

export const NY = 'America/New_York';
export type Zone = 'UTC' | typeof NY;
export type Request = TrendsRequest | FunnelsRequest | RetentionRequest | LifecycleRequest | StickinessRequest;

/** Writes a project's fixture rows; the historical batch after the newer one, as late-arriving events are. */
export async function insertFixture(clickhouse: ClickHouse, teamId: number, fixture: Fixture): Promise<void> {
  for (const [i, batch] of fixture.batches.entries()) {
    const insertedAt = `2024-04-0${i + 1} 00:00:00`;
    const rows = batch.map((e) =>
      eventRow(teamId, e.distinctId, e.event, e.timestamp, e.properties, { timestamp_ms: e.ms, person_id: e.personId, person_properties: JSON.stringify(e.personProperties), group_0: e.group0, inserted_at: insertedAt }),
    );
    await clickhouse.insert('events', EVENT_ROW_COLUMNS, rows);
  }
  const persons = fixture.persons.map((p) => ({ id: p.id, created_at: p.createdAt, team_id: teamId, properties: JSON.stringify(p.properties), is_identified: 1, is_deleted: 0, version: p.version }));
  await clickhouse.insert('person', PERSON_COLUMNS, persons);
  const ids = fixture.distinctIds.map((d) => ({ team_id: teamId, distinct_id: d.distinctId, person_id: d.personId, is_deleted: d.isDeleted ? 1 : 0, version: d.version }));
  await clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, ids);
}

// ---- What is compared: the numbers and their labels, not the envelope.

const pick = (source: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.filter((k) => source[k] !== undefined).map((k) => [k, source[k]]));
const TRENDS_KEYS = ['label', 'count', 'data', 'days', 'labels', 'breakdown_value', 'compare_label', 'aggregated_value'];
const FUNNEL_KEYS = ['name', 'order', 'count', 'average_conversion_time', 'median_conversion_time', 'breakdown_value'];
const LIFECYCLE_KEYS = ['status', 'label', 'data', 'count', 'days', 'labels'];
const STICKINESS_KEYS = ['label', 'count', 'data', 'days', 'labels'];

/** The endpoint's answer in the reference's terms; a retention cohort's `date` is compared as a moment. */
export function observed(request: Request, results: any[]): unknown {
  switch (request.kind) {
    case 'TrendsQuery':
      return results.map((r) => pick(r, TRENDS_KEYS));
    case 'FunnelsQuery':
      return results.map((r) => (Array.isArray(r) ? r.map((s) => pick(s, FUNNEL_KEYS)) : pick(r, FUNNEL_KEYS)));
    case 'RetentionQuery':
      return results.map((r) => ({ date: Date.parse(r.date), label: r.label, values: r.values.map((v: { count: number; label: string }) => ({ count: v.count, label: v.label })) }));
    case 'LifecycleQuery':
      return results.map((r) => pick(r, LIFECYCLE_KEYS));
    case 'StickinessQuery':
      return results.map((r) => pick(r, STICKINESS_KEYS));
  }
}

export function expected(world: World, request: Request): unknown {
  switch (request.kind) {
    case 'TrendsQuery':
      return referenceTrends(world, request);
    case 'FunnelsQuery':
      return referenceFunnels(world, request);
    case 'RetentionQuery':
      return referenceRetention(world, request);
    case 'LifecycleQuery':
      return referenceLifecycle(world, request);
    case 'StickinessQuery':
      return referenceStickiness(world, request);
  }
}

// ---- The cases.

const range = (date_from: string, date_to: string) => ({ date_from, date_to });
const pageviews: TrendsSeries = { kind: 'EventsNode', event: '$pageview' };
const purchases: TrendsSeries = { kind: 'EventsNode', event: 'purchase' };
const signups: TrendsSeries = { kind: 'EventsNode', event: 'signup' };
const trends = (series: TrendsSeries[], interval: TrendsRequest['interval'], dateRange: TrendsRequest['dateRange'], rest: Partial<TrendsRequest> = {}): TrendsRequest => ({ kind: 'TrendsQuery', series, interval, dateRange, ...rest });
const amount = (math: TrendsSeries['math']): TrendsSeries => ({ ...purchases, math, math_property: 'amount' });
const JAN = range('2024-01-01', '2024-01-31');
const Q1 = range('2024-01-01', '2024-03-31');
const WEEKS = range('2024-01-01', '2024-02-11');

const step = (event: string) => ({ kind: 'EventsNode' as const, event });
const TWENTY_STEPS = Array.from({ length: 20 }, (_, k) => ['$pageview', 'signup', '$pageview', 'purchase'][k % 4]!);
const cancel = (funnelFromStep: number, funnelToStep: number) => ({ kind: 'EventsNode' as const, event: 'cancel', funnelFromStep, funnelToStep });
const funnel = (events: string[], funnelsFilter: FunnelsRequest['funnelsFilter'] = {}, rest: Partial<FunnelsRequest> = {}): FunnelsRequest => ({ kind: 'FunnelsQuery', series: events.map(step), dateRange: JAN, funnelsFilter, ...rest });
const retention = (period: RetentionRequest['retentionFilter']['period'], retentionType: RetentionRequest['retentionFilter']['retentionType'], totalIntervals: number, date_to: string, rest: Partial<RetentionRequest['retentionFilter']> = {}): RetentionRequest => ({
  kind: 'RetentionQuery',
  retentionFilter: { period, retentionType, totalIntervals, ...rest },
  dateRange: { date_to },
});
const lifecycle = (interval: LifecycleRequest['interval'], dateRange: LifecycleRequest['dateRange'], rest: Partial<LifecycleRequest> = {}): LifecycleRequest => ({ kind: 'LifecycleQuery', series: [pageviews], interval, dateRange, ...rest });
const stickiness = (interval: StickinessRequest['interval'], dateRange: StickinessRequest['dateRange'], series = [pageviews]): StickinessRequest => ({ kind: 'StickinessQuery', series, interval, dateRange });

const proPlan = { key: 'plan', type: 'person' as const, value: 'pro' };
const chrome = { key: '$browser', type: 'event' as const, value: 'Chrome' };

export const CASES: [string, Request][] = [
  // Trends: each math, each interval.
  ['trends total by day, across day edges', trends([pageviews], 'day', range('2024-01-01', '2024-01-10'))],
  ['trends total by hour, across an hour edge', trends([pageviews], 'hour', range('2024-01-03', '2024-01-03'))],
  ['trends total by hour over the spring-forward day', trends([pageviews], 'hour', range('2024-03-10', '2024-03-10'))],
  ['trends total by week, across the Sunday/Monday edges', trends([pageviews], 'week', WEEKS)],
  ['trends total by month, across the month edges', trends([pageviews], 'month', Q1)],
  ['trends of all events by day', trends([{ kind: 'EventsNode', event: null }], 'day', range('2024-01-01', '2024-01-07'))],
  ['trends dau by day: merged ids are one person', trends([{ ...pageviews, math: 'dau' }], 'day', range('2024-01-01', '2024-01-14'))],
  ['trends dau by week', trends([{ ...pageviews, math: 'dau' }], 'week', WEEKS)],
  ['trends dau by month', trends([{ ...pageviews, math: 'dau' }], 'month', Q1)],
  ['trends weekly_active by day, counting the days before the range', trends([{ ...pageviews, math: 'weekly_active' }], 'day', range('2024-01-05', '2024-01-20'))],
  ['trends weekly_active by week', trends([{ ...pageviews, math: 'weekly_active' }], 'week', WEEKS)],
  ['trends monthly_active by day', trends([{ ...pageviews, math: 'monthly_active' }], 'day', range('2024-01-25', '2024-02-06'))],
  ['trends monthly_active by month', trends([{ ...pageviews, math: 'monthly_active' }], 'month', Q1)],
  ['trends unique_session by day: empty and absent sessions are not sessions', trends([{ kind: 'EventsNode', event: null, math: 'unique_session' }], 'day', range('2024-01-01', '2024-01-10'))],
  ['trends sum of a property by day', trends([amount('sum')], 'day', JAN)],
  ['trends avg of a property by week', trends([amount('avg')], 'week', WEEKS)],
  ['trends min of a property by month', trends([amount('min')], 'month', Q1)],
  ['trends max of a property by day', trends([amount('max')], 'day', range('2024-01-01', '2024-01-12'))],
  ['trends median of a property by month', trends([amount('median')], 'month', Q1)],
  ['trends p90 of a property by month', trends([amount('p90')], 'month', Q1)],
  ['trends p95 of a property by week', trends([amount('p95')], 'week', WEEKS)],
  ['trends p99 of a property by month', trends([amount('p99')], 'month', Q1)],
  ['trends unique_group by week', trends([{ ...purchases, math: 'unique_group', math_group_type_index: 0 }], 'week', range('2024-01-01', '2024-03-03'))],
  // Filters, breakdowns, compare, formula, totals.
  ['trends with an event property filter on the series', trends([{ ...pageviews, properties: [chrome] }], 'day', range('2024-01-01', '2024-01-10'))],
  ['trends with a person property filter, as the person was at the event', trends([pageviews], 'week', range('2024-01-01', '2024-03-17'), { properties: [proPlan] })],
  ['trends with an is_not and a numeric filter', trends([{ ...purchases, properties: [{ key: 'amount', type: 'event', operator: 'gt', value: 10 }] }], 'month', Q1, { properties: [{ key: 'plan', type: 'person', operator: 'is_not', value: 'enterprise' }] })],
  ['trends broken down by an event property with null values', trends([pageviews], 'day', range('2024-01-01', '2024-01-10'), { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })],
  ['trends broken down by a person property with null values', trends([{ ...pageviews, math: 'dau' }], 'week', WEEKS, { breakdownFilter: { breakdown: 'country', breakdown_type: 'person' } })],
  ['trends broken down with a limit, the rest as other', trends([pageviews], 'week', WEEKS, { breakdownFilter: { breakdown: 'country', breakdown_type: 'person', breakdown_limit: 2 } })],
  ['trends weekly_active by day broken down by an event property, limit 1 and other', trends([{ ...pageviews, math: 'weekly_active' }], 'day', range('2024-01-05', '2024-01-20'), { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: 1 } })],
  ['trends monthly_active by week broken down by a person property', trends([{ ...pageviews, math: 'monthly_active' }], 'week', WEEKS, { breakdownFilter: { breakdown: 'country', breakdown_type: 'person' } })],
  ['trends dau broken down by event property with limit 1', trends([{ ...pageviews, math: 'dau' }], 'month', Q1, { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: 1 } })],
  ['trends of two series broken down', trends([pageviews, purchases], 'month', Q1, { breakdownFilter: { breakdown: 'country', breakdown_type: 'person' } })],
  ['trends compared with the previous period', trends([pageviews], 'day', range('2024-01-08', '2024-01-14'), { compareFilter: { compare: true } })],
  ['trends dau by week compared with the previous period', trends([{ ...pageviews, math: 'dau' }], 'week', range('2024-01-29', '2024-02-11'), { compareFilter: { compare: true } })],
  ['trends formula A/B*100 (zero where B is 0)', trends([purchases, pageviews], 'day', range('2024-01-01', '2024-01-12'), { trendsFilter: { formula: 'A/B*100' } })],
  ['trends formula with compare', trends([signups, purchases], 'week', WEEKS, { trendsFilter: { formula: 'A+B' }, compareFilter: { compare: true } })],
  ['trends formula on total values', trends([{ ...pageviews, math: 'dau' }, { ...purchases, math: 'dau' }], 'day', JAN, { trendsFilter: { formula: '(A+B)/2', display: 'BoldNumber' } })],
  ['trends total value (BoldNumber)', trends([pageviews, purchases], 'day', JAN, { trendsFilter: { display: 'BoldNumber' } })],
  ['trends total value of dau', trends([{ ...pageviews, math: 'dau' }], 'day', Q1, { trendsFilter: { display: 'BoldNumber' } })],
  ['trends total value of weekly_active: the last 7 days', trends([{ ...pageviews, math: 'weekly_active' }], 'day', JAN, { trendsFilter: { display: 'BoldNumber' } })],
  ['trends total value of sum broken down by person', trends([amount('sum')], 'day', Q1, { trendsFilter: { display: 'ActionsPie' }, breakdownFilter: { breakdown: 'country', breakdown_type: 'person' } })],
  // Funnels.
  ['funnel ordered, 14-day window', funnel(['$pageview', 'signup', 'purchase'])],
  ['funnel ordered, 1-day window', funnel(['$pageview', 'signup', 'purchase'], { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' })],
  ['funnel ordered, 45-minute window', funnel(['$pageview', 'signup', 'purchase'], { funnelWindowInterval: 45, funnelWindowIntervalUnit: 'minute' })],
  ['funnel strict: any event between steps breaks it', funnel(['$pageview', 'signup', 'purchase'], { funnelOrderType: 'strict' })],
  ['funnel unordered', funnel(['$pageview', 'signup', 'purchase'], { funnelOrderType: 'unordered' })],
  ['funnel with an exclusion between its steps', funnel(['signup', 'purchase'], { exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }] })],
  ['funnel with an exclusion its person does before never reaching the last step', funnel(['signup', 'purchase'], { exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }] }, { dateRange: Q1 })],
  ['funnel strict with an exclusion over all its steps', funnel(['$pageview', 'signup', 'purchase'], { funnelOrderType: 'strict', exclusions: [cancel(0, 2)] }, { dateRange: Q1 })],
  ['funnel with an exclusion between its last two steps, a 1-day window', funnel(['$pageview', 'signup', 'purchase'], { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day', exclusions: [cancel(1, 2)] }, { dateRange: Q1 })],
  ['funnel with an exclusion, broken down by an event property of the first step', funnel(['$pageview', 'signup', 'purchase'], { exclusions: [cancel(0, 2)] }, { dateRange: Q1, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })],
  ['funnel over the whole quarter, 1-week window', funnel(['$pageview', 'purchase'], { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'week' }, { dateRange: Q1 })],
  ['funnel with a step property filter and a person filter', funnel(['$pageview', 'purchase'], {}, { series: [{ kind: 'EventsNode', event: '$pageview', properties: [chrome] }, step('purchase')], properties: [{ key: 'country', type: 'person', operator: 'is_set' }] })],
  ['funnel broken down by an event property of the first step', funnel(['$pageview', 'purchase'], {}, { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })],
  ['funnel broken down by person, limit 2 and other', funnel(['$pageview', 'signup'], {}, { dateRange: Q1, breakdownFilter: { breakdown: 'country', breakdown_type: 'person', breakdown_limit: 2 } })],
  // Twenty steps (the most a funnel takes), each event a step several times over: the statement grows with the steps, not by a power of them.
  ['funnel of twenty steps', funnel(TWENTY_STEPS, {}, { dateRange: Q1 })],
  ['funnel of twenty steps, strict', funnel(TWENTY_STEPS, { funnelOrderType: 'strict' }, { dateRange: Q1 })],
  ['funnel of twenty steps, unordered', funnel(TWENTY_STEPS, { funnelOrderType: 'unordered' }, { dateRange: Q1 })],
  ['funnel of twenty steps with exclusions', funnel(TWENTY_STEPS, { exclusions: [cancel(0, 19), cancel(1, 3), cancel(17, 18)] }, { dateRange: Q1 })],
  ['funnel of twenty steps, strict, with exclusions', funnel(TWENTY_STEPS, { funnelOrderType: 'strict', exclusions: [cancel(0, 19), cancel(2, 5)] }, { dateRange: Q1 })],
  ['funnel of twenty steps with an exclusion, broken down by an event property', funnel(TWENTY_STEPS, { exclusions: [cancel(0, 19)] }, { dateRange: Q1, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })],
  ['funnel of twenty steps broken down by an event property', funnel(TWENTY_STEPS, {}, { dateRange: Q1, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })],
  // Retention.
  ['retention recurring by day', retention('Day', 'retention_recurring', 7, '2024-01-07')],
  ['retention first time by day', retention('Day', 'retention_first_time', 7, '2024-01-07')],
  ['retention recurring by week', retention('Week', 'retention_recurring', 6, '2024-02-05')],
  ['retention first time by week, signup then pageview', retention('Week', 'retention_first_time', 5, '2024-01-31', { targetEntity: { id: 'signup', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } })],
  ['retention recurring by month', retention('Month', 'retention_recurring', 3, '2024-03-31')],
  ['retention first time by month', retention('Month', 'retention_first_time', 3, '2024-03-15')],
  // Lifecycle.
  ['lifecycle by day', lifecycle('day', range('2024-01-01', '2024-01-16'))],
  ['lifecycle by week', lifecycle('week', range('2024-01-01', '2024-03-17'))],
  ['lifecycle by month', lifecycle('month', Q1)],
  ['lifecycle by day with a browser filter', lifecycle('day', range('2024-01-01', '2024-01-10'), { properties: [chrome] })],
  // Stickiness.
  ['stickiness by day', stickiness('day', range('2024-01-01', '2024-01-10'))],
  ['stickiness by hour', stickiness('hour', range('2024-01-03', '2024-01-03'))],
  ['stickiness by week of two series', stickiness('week', WEEKS, [pageviews, purchases])],
  ['stickiness by month', stickiness('month', Q1)],
];

/** The questions whose answers move with the zone: every bucketing interval and kind. */
export const ZONED = new Set([
  'trends total by day, across day edges',
  'trends total by hour over the spring-forward day',
  'trends total by week, across the Sunday/Monday edges',
  'trends total by month, across the month edges',
  'trends dau by day: merged ids are one person',
  'trends weekly_active by day, counting the days before the range',
  'trends monthly_active by month',
  'trends broken down by an event property with null values',
  'trends compared with the previous period',
  'trends total value of weekly_active: the last 7 days',
  'funnel ordered, 14-day window',
  'funnel broken down by person, limit 2 and other',
  'retention recurring by day',
  'retention first time by week, signup then pageview',
  'retention recurring by month',
  'lifecycle by day',
  'lifecycle by week',
  'stickiness by day',
  'stickiness by week of two series',
]);

export const TABLE: [string, Zone, Request][] = [...CASES.map(([name, request]): [string, Zone, Request] => [name, 'UTC', request]), ...CASES.filter(([name]) => ZONED.has(name)).map(([name, request]): [string, Zone, Request] => [name, NY, request])];

// ---- The same questions with actions.

/** An action as the API takes it: one step, an event and its property filters. */
export interface OracleAction {
  name: string;
  steps: { event?: string; properties?: PropertyFilter[] }[];
}

/**
 * The question with each event series, funnel step and exclusion, and retention entity asked as an action instead
 * (PostHog's `ActionsNode`, `{type: 'actions', id}`): an action of one step holding the event and
 * the series' own property filters, named after the event so labels stay the same. `idOf` gives
 * the id each action has where it is stored. The answer must be the event question's.
 */
export function asActions(request: Request, idOf: (action: OracleAction) => number): Request {
  const node = (series: { kind?: string; event?: string | null; properties?: PropertyFilter[] }) => {
    const { kind: _kind, event, properties, ...rest } = series;
    const id = idOf({ name: event ?? 'All events', steps: [{ ...(event != null && { event }), ...(properties && { properties }) }] });
    return { ...rest, kind: 'ActionsNode', id };
  };
  if (request.kind === 'FunnelsQuery' && request.funnelsFilter?.exclusions) {
    return { ...request, series: request.series.map(node), funnelsFilter: { ...request.funnelsFilter, exclusions: request.funnelsFilter.exclusions.map(node) } } as unknown as Request;
  }
  if (request.kind !== 'RetentionQuery') return { ...request, series: request.series.map(node) } as unknown as Request;
  const entity = (e: { id: string } | undefined) => e && { type: 'actions', id: idOf({ name: e.id, steps: [{ event: e.id }] }) };
  const { targetEntity, returningEntity, ...filter } = request.retentionFilter;
  // No entity means $pageview, in PostHog and here: asked as an action too.
  return { ...request, retentionFilter: { ...filter, targetEntity: entity(targetEntity ?? { id: '$pageview' }), returningEntity: entity(returningEntity ?? { id: '$pageview' }) } } as unknown as Request;
}
