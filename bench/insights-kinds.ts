/**
 * The insights bench's data and insights (bench/insights.ts, bench/scale.ts): its dataset, the
 * three insights as the endpoint takes them, each with its hand-written statement and how both
 * sides' numbers are read.
 */
import type { Dataset } from './bench-dataset.js';

const DISTINCT_IDS = 200_000;
const SPAN_DAYS = 56;
/** A distinct id stays active this share of the span after it arrives (4 weeks of 8). */
const LIFETIME = 0.5;
const DAY_MS = 86_400_000;
const FUNNEL_WINDOW_DAYS = 14;
const RETENTION_WEEKS = 8;
const BREAKDOWN_LIMIT = 25;
const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$';
const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$';
const ZERO_UUID = "toUUID('00000000-0000-0000-0000-000000000000')";

/** The insights bench's events (`total` of them, in the project `slug` names). */
export const insightsDataset = (total: number, slug: string, reload: boolean): Dataset => ({
  slug,
  events: total,
  spanDays: SPAN_DAYS,
  distinctIds: DISTINCT_IDS,
  // One in five a $pageview (as realisticEvent), one in twenty a sign-up: the funnel's three steps.
  eventSql: "multiIf(intHash32(number) % 5 = 0, '$pageview', intHash32(number) % 20 = 1, 'signed up', 'button clicked')",
  // Distinct ids arrive evenly over the span (and LIFETIME before it); an event belongs to one that
  // arrived up to LIFETIME before it, more likely a recent one (the lag is LIFETIME · v², v uniform).
  distinctIdSql: `toUInt32(${DISTINCT_IDS} * (number / ${total} + ${LIFETIME} * (1 - pow((intHash64(number) % 1000000) / 1000000, 2))) / ${1 + LIFETIME})`,
  personSql: (n) => `intDiv(${n}, 2) * 2`,
  reload,
});

// ---- The insights, and what each one's numbers are --------------------------------------------

/** An insight's numbers by a key (`Chrome 2024-01-01`, `step 2`, `cohort 3 week 1`): what both sides must agree on. */
export type Numbers = Map<string, number>;

export interface Insight {
  name: string;
  query: Record<string, unknown>;
  /** The numbers in the endpoint's `results`. */
  fromEndpoint: (results: unknown) => Numbers;
  /** The hand-written statement, for the dates as of `now`; `overridesOnly` joins only the ids that moved, as persons on events does. */
  hand: (team: number, now: Date, overridesOnly: boolean) => string;
  /** The numbers in the hand-written statement's rows (and its WITH TOTALS row, if it has one). */
  fromHand: (rows: unknown[][], totals?: unknown[]) => Numbers;
}

const utcDay = (date: Date) => new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);
const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const at = (date: Date) => `toDateTime('${date.toISOString().slice(0, 19).replace('T', ' ')}', 'UTC')`;

/**
 * Each distinct id's current person, as `person_distinct_id` says (the latest version, not
 * deleted); with persons on events, only the ids that moved (above version 0) since the override
 * squash last rewrote their events, grouping only those stored since its cut.
 */
const pdiSql = (team: number, overridesOnly: boolean) => {
  const current = (where: string, having: string) =>
    `SELECT distinct_id, argMax(person_id, version) AS current_person, max(version) AS latest FROM person_distinct_id WHERE team_id = ${team}${where} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0${having}`;
  if (!overridesOnly) return current('', '');
  const since = `distinct_id IN (SELECT distinct_id FROM person_distinct_id WHERE team_id = ${team} AND _timestamp >= (SELECT max(settled_before) FROM override_squashes WHERE team_id = ${team}))`;
  return `SELECT distinct_id, current_person FROM (${current(` AND version > 0 AND ${since}`, ` AND (distinct_id, latest) NOT IN (SELECT distinct_id, version FROM squashed_distinct_ids WHERE team_id = ${team})`)})`;
};
/** A distinct id without a mapping keeps the person stored on its events, as the endpoint's join does. */
const personSql = (stored: string) => `if(current_person = ${ZERO_UUID}, ${stored}, current_person)`;

const TRENDS: Insight = {
  name: 'trends: 30 days, daily, $browser breakdown',
  query: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview' }],
    interval: 'day',
    dateRange: { date_from: '-30d' },
    breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
  },
  fromEndpoint: (results) => {
    const numbers: Numbers = new Map();
    for (const r of results as { breakdown_value: string; days: string[]; data: number[] }[]) r.days.forEach((day, i) => numbers.set(`${r.breakdown_value} ${day}`, r.data[i]!));
    return numbers;
  },
  // One scan: the top values with their days, and (WITH TOTALS, which ignores the LIMIT) every
  // value's days, from which "other" is what the top ones leave.
  hand: (team, now) => {
    const from = new Date(utcDay(now).getTime() - 30 * DAY_MS);
    const to = new Date(utcDay(now).getTime() + DAY_MS);
    return `SELECT if(browser = '', '${BREAKDOWN_NULL}', browser) AS value, sum(n) AS total, sumMap([day], [n]) AS by_day FROM (
      SELECT toDate(timestamp, 'UTC') AS day, visitParamExtractString(properties, '$browser') AS browser, count() AS n
      FROM events WHERE team_id = ${team} AND event = '$pageview' AND timestamp >= ${at(from)} AND timestamp < ${at(to)}
      GROUP BY day, browser)
    GROUP BY value WITH TOTALS ORDER BY total DESC, value ASC LIMIT ${BREAKDOWN_LIMIT}`;
  },
  fromHand: (rows, totals) => {
    const numbers: Numbers = new Map();
    const byDay = (cell: unknown) => {
      const [days, counts] = cell as [string[], number[]];
      return days.map((day, i): [string, number] => [day, Number(counts[i])]);
    };
    for (const [value, , cell] of rows) for (const [day, n] of byDay(cell)) numbers.set(`${String(value)} ${day}`, n);
    for (const [day, n] of byDay(totals![2])) {
      const top = rows.reduce((sum, [value]) => sum + (numbers.get(`${String(value)} ${day}`) ?? 0), 0);
      if (n > top) numbers.set(`${BREAKDOWN_OTHER} ${day}`, n - top);
    }
    return numbers;
  },
};

const FUNNEL_STEPS = ['$pageview', 'button clicked', 'signed up'];
const FUNNEL: Insight = {
  name: 'funnel: 3 steps, 14-day window',
  query: {
    kind: 'FunnelsQuery',
    series: FUNNEL_STEPS.map((event) => ({ kind: 'EventsNode', event })),
    dateRange: { date_from: '-30d' },
    funnelsFilter: { funnelWindowInterval: FUNNEL_WINDOW_DAYS, funnelWindowIntervalUnit: 'day' },
  },
  fromEndpoint: (results) => new Map((results as { order: number; count: number }[]).map((step) => [`step ${step.order + 1}`, step.count])),
  hand: (team, now, overridesOnly) => {
    const from = new Date(utcDay(now).getTime() - 30 * DAY_MS);
    const to = new Date(utcDay(now).getTime() + DAY_MS);
    const steps = FUNNEL_STEPS.map((event) => `event = '${event}'`).join(', ');
    return `SELECT ${FUNNEL_STEPS.map((_, k) => `countIf(level >= ${k + 1})`).join(', ')} FROM (
      SELECT ${personSql('person_id')} AS person, windowFunnel(${FUNNEL_WINDOW_DAYS * 86_400})(timestamp, ${steps}) AS level
      FROM (SELECT distinct_id, person_id, timestamp, event FROM events
            WHERE team_id = ${team} AND event IN (${FUNNEL_STEPS.map((e) => `'${e}'`).join(', ')}) AND timestamp >= ${at(from)} AND timestamp < ${at(to)})
      ANY LEFT JOIN (${pdiSql(team, overridesOnly)}) USING distinct_id
      GROUP BY person)`;
  },
  fromHand: (rows) => new Map(rows[0]!.map((count, k) => [`step ${k + 1}`, Number(count)])),
};

const RETENTION: Insight = {
  name: 'retention: 8 weeks, first time',
  query: { kind: 'RetentionQuery', retentionFilter: { period: 'Week', totalIntervals: RETENTION_WEEKS, retentionType: 'retention_first_time' } },
  fromEndpoint: (results) => {
    const numbers: Numbers = new Map();
    (results as { values: { count: number }[] }[]).forEach((cohort, c) => cohort.values.forEach((value, w) => numbers.set(`cohort ${c} week ${w}`, value.count)));
    return numbers;
  },
  hand: (team, now, overridesOnly) => {
    const monday = new Date(utcDay(now).getTime() - ((now.getUTCDay() + 6) % 7) * DAY_MS);
    const start = new Date(monday.getTime() - (RETENTION_WEEKS - 1) * 7 * DAY_MS);
    const end = new Date(monday.getTime() + 7 * DAY_MS);
    const week = (value: string) => `intDiv(dateDiff('day', toDate('${isoDay(start)}'), toMonday(${value}, 'UTC')), 7)`;
    return `SELECT cohort, arrayJoin(arrayFilter(w -> w >= cohort AND w < ${RETENTION_WEEKS}, weeks)) - cohort AS week, count() FROM (
      SELECT ${week('min(timestamp)')} AS cohort, groupUniqArrayIf(${week('timestamp')}, timestamp >= ${at(start)}) AS weeks FROM (
        SELECT ${personSql('person_id')} AS person, timestamp
        FROM (SELECT distinct_id, person_id, timestamp FROM events WHERE team_id = ${team} AND event = '$pageview' AND timestamp < ${at(end)})
        ANY LEFT JOIN (${pdiSql(team, overridesOnly)}) USING distinct_id)
      GROUP BY person
      HAVING cohort >= 0 AND cohort < ${RETENTION_WEEKS})
    GROUP BY cohort, week`;
  },
  fromHand: (rows) => new Map(rows.map(([cohort, week, persons]) => [`cohort ${String(cohort)} week ${String(week)}`, Number(persons)])),
};

export const INSIGHTS = [TRENDS, FUNNEL, RETENTION];

/** Where the two sides' numbers differ (a missing key counts as 0: the endpoint zero-fills, ClickHouse returns no row). */
export function differences(endpoint: Numbers, hand: Numbers): string[] {
  const keys = [...new Set([...endpoint.keys(), ...hand.keys()])].sort();
  return keys.filter((k) => (endpoint.get(k) ?? 0) !== (hand.get(k) ?? 0)).map((k) => `${k}: endpoint ${endpoint.get(k) ?? 0}, hand-written ${hand.get(k) ?? 0}`);
}
