/**
 * The insight kinds of the query endpoint against hand-written ClickHouse SQL (issue 45): a 30-day
 * daily `$pageview` trend broken down by `$browser`, a 3-step funnel with a 14-day window and an
 * 8-week first-time retention, on INSIGHTS_BENCH_EVENTS events (default 5,000,000) of one project.
 * Each is timed through `POST /api/projects/:id/query/` at the front door (`refresh:
 * force_blocking`) and as one hand-written statement sent straight to ClickHouse over HTTP with
 * the endpoint's settings, in one run; the numbers of the two must agree, or the run stops.
 * Needs `make up`. Ends with one line:
 * RESULT trends_ms=<n> funnel_ms=<n> retention_ms=<n> worst_ratio=<hand/endpoint>
 *
 * The events span the 8 weeks before the load (bench/bench-dataset.ts, kept in
 * .tributary/insights-bench.json, INSIGHTS_BENCH_RELOAD=1 loads them again): 200,000 distinct
 * ids that arrive over the weeks and stay active about 4, so cohorts and funnels convert at
 * realistic rates; every two distinct ids are one person, and the odd one's events still carry
 * its own old person id, so only a query that resolves persons through `person_distinct_id` (as
 * the endpoint does) counts right. Dates are the project's timezone, UTC.
 * Each insight runs once to warm up, then INSIGHTS_BENCH_ROUNDS times (default 5) each way, the
 * order swapped every round. Last, each insight runs once more through the endpoint while
 * `system.processes` is watched, and every statement it ran is timed alone, to show which one
 * dominates.
 * Run: npx tsx bench/insights.ts
 */
import { loadConfig } from '@tributary/config';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { queryClickHouseSettings } from '../services/api/src/query/query-settings.js';
import { benchProject, type BenchProject, type Dataset } from './bench-dataset.js';
import { readCredentialsOrExit } from './events.js';
import { median, table } from './lib.js';

const total = Number(process.env.INSIGHTS_BENCH_EVENTS ?? 5_000_000);
const rounds = Number(process.env.INSIGHTS_BENCH_ROUNDS ?? 5);
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

const DATASET: Dataset = {
  slug: 'insights-bench',
  events: total,
  spanDays: SPAN_DAYS,
  distinctIds: DISTINCT_IDS,
  // One in five a $pageview (as realisticEvent), one in twenty a sign-up: the funnel's three steps.
  eventSql: "multiIf(intHash32(number) % 5 = 0, '$pageview', intHash32(number) % 20 = 1, 'signed up', 'button clicked')",
  // Distinct ids arrive evenly over the span (and LIFETIME before it); an event belongs to one that
  // arrived up to LIFETIME before it, more likely a recent one (the lag is LIFETIME · v², v uniform).
  distinctIdSql: `toUInt32(${DISTINCT_IDS} * (number / ${total} + ${LIFETIME} * (1 - pow((intHash64(number) % 1000000) / 1000000, 2))) / ${1 + LIFETIME})`,
  personSql: (n) => `intDiv(${n}, 2) * 2`,
  reload: Boolean(process.env.INSIGHTS_BENCH_RELOAD),
};

const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const { TRIBUTARY_URL } = await readCredentialsOrExit();
const clickhouse = createClickHouse(config, { requestTimeoutMs: 900_000 });
const settings = queryClickHouseSettings(config);

// ---- The insights, and what each one's numbers are --------------------------------------------

/** An insight's numbers by a key (`Chrome 2024-01-01`, `step 2`, `cohort 3 week 1`): what both sides must agree on. */
type Numbers = Map<string, number>;

interface Insight {
  name: string;
  query: Record<string, unknown>;
  /** The numbers in the endpoint's `results`. */
  fromEndpoint: (results: unknown) => Numbers;
  /** The hand-written statement, for the dates as of `now`. */
  hand: (team: number, now: Date) => string;
  /** The numbers in the hand-written statement's rows (and its WITH TOTALS row, if it has one). */
  fromHand: (rows: unknown[][], totals?: unknown[]) => Numbers;
}

const utcDay = (date: Date) => new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);
const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const at = (date: Date) => `toDateTime('${date.toISOString().slice(0, 19).replace('T', ' ')}', 'UTC')`;

/** Each distinct id's current person, as `person_distinct_id` says (the latest version, not deleted). */
const pdiSql = (team: number) =>
  `SELECT distinct_id, argMax(person_id, version) AS current_person FROM person_distinct_id WHERE team_id = ${team} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`;
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
  hand: (team, now) => {
    const from = new Date(utcDay(now).getTime() - 30 * DAY_MS);
    const to = new Date(utcDay(now).getTime() + DAY_MS);
    const steps = FUNNEL_STEPS.map((event) => `event = '${event}'`).join(', ');
    return `SELECT ${FUNNEL_STEPS.map((_, k) => `countIf(level >= ${k + 1})`).join(', ')} FROM (
      SELECT ${personSql('person_id')} AS person, windowFunnel(${FUNNEL_WINDOW_DAYS * 86_400})(timestamp, ${steps}) AS level
      FROM (SELECT distinct_id, person_id, timestamp, event FROM events
            WHERE team_id = ${team} AND event IN (${FUNNEL_STEPS.map((e) => `'${e}'`).join(', ')}) AND timestamp >= ${at(from)} AND timestamp < ${at(to)})
      ANY LEFT JOIN (${pdiSql(team)}) USING distinct_id
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
  hand: (team, now) => {
    const monday = new Date(utcDay(now).getTime() - ((now.getUTCDay() + 6) % 7) * DAY_MS);
    const start = new Date(monday.getTime() - (RETENTION_WEEKS - 1) * 7 * DAY_MS);
    const end = new Date(monday.getTime() + 7 * DAY_MS);
    const week = (value: string) => `intDiv(dateDiff('day', toDate('${isoDay(start)}'), toMonday(${value}, 'UTC')), 7)`;
    return `SELECT cohort, arrayJoin(arrayFilter(w -> w >= cohort AND w < ${RETENTION_WEEKS}, weeks)) - cohort AS week, count() FROM (
      SELECT ${week('min(timestamp)')} AS cohort, groupUniqArrayIf(${week('timestamp')}, timestamp >= ${at(start)}) AS weeks FROM (
        SELECT ${personSql('person_id')} AS person, timestamp
        FROM (SELECT distinct_id, person_id, timestamp FROM events WHERE team_id = ${team} AND event = '$pageview' AND timestamp < ${at(end)})
        ANY LEFT JOIN (${pdiSql(team)}) USING distinct_id)
      GROUP BY person
      HAVING cohort >= 0 AND cohort < ${RETENTION_WEEKS})
    GROUP BY cohort, week`;
  },
  fromHand: (rows) => new Map(rows.map(([cohort, week, persons]) => [`cohort ${String(cohort)} week ${String(week)}`, Number(persons)])),
};

const INSIGHTS = [TRENDS, FUNNEL, RETENTION];

/** Where the two sides' numbers differ (a missing key counts as 0: the endpoint zero-fills, ClickHouse returns no row). */
function differences(endpoint: Numbers, hand: Numbers): string[] {
  const keys = [...new Set([...endpoint.keys(), ...hand.keys()])].sort();
  return keys.filter((k) => (endpoint.get(k) ?? 0) !== (hand.get(k) ?? 0)).map((k) => `${k}: endpoint ${endpoint.get(k) ?? 0}, hand-written ${hand.get(k) ?? 0}`);
}

// ---- Sending them --------------------------------------------------------------------------------

const elapsedMs = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const causeOf = (error: unknown) => String((error as { cause?: unknown }).cause ?? error);

/**
 * One request, timed. The api may be restarted under the bench (another change being tried): a
 * refused connection, a reset reused connection or nginx's 502/503/504 is waited out and sent
 * again, for up to a minute, and only the answered attempt is timed.
 */
async function timedFetch(url: string, init: RequestInit): Promise<{ ms: number; status: number; body: unknown }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const started = process.hrtime.bigint();
    try {
      const response = await fetch(url, init);
      const text = await response.text();
      const ms = elapsedMs(started);
      if ([502, 503, 504].includes(response.status) && Date.now() < deadline) {
        await sleep(2000);
        continue;
      }
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Left as text for the error message.
      }
      return { ms, status: response.status, body };
    } catch (error) {
      if (!(error instanceof TypeError) || !/ECONNREFUSED|ECONNRESET|EPIPE|other side closed|socket/i.test(causeOf(error)) || Date.now() >= deadline) throw error;
      await sleep(1000);
    }
  }
}

interface Answer {
  ms: number;
  numbers: Numbers;
}

function endpoint(project: BenchProject) {
  const url = `${TRIBUTARY_URL}/api/projects/${project.projectId}/query/`;
  return async (insight: Insight, clientQueryId?: string): Promise<Answer> => {
    const { ms, status, body } = await timedFetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.personalApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: insight.query, refresh: 'force_blocking', ...(clientQueryId && { client_query_id: clientQueryId }) }),
    });
    const answer = body as { results?: unknown[] };
    if (status !== 200 || !Array.isArray(answer.results)) throw new Error(`endpoint: ${status} ${JSON.stringify(body).slice(0, 500)} for ${insight.name}`);
    return { ms, numbers: insight.fromEndpoint(answer.results) };
  };
}

/** Sends a statement to ClickHouse over HTTP with the endpoint's settings and format. */
function direct() {
  const params = new URLSearchParams({ database: config.clickhouseDatabase, user: config.clickhouseUser, ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, String(v)])) });
  if (config.clickhousePassword) params.set('password', config.clickhousePassword);
  const url = `${config.clickhouseUrl.replace(/\/$/, '')}/?${params}`;
  return async (statement: string): Promise<{ ms: number; rows: unknown[][]; totals?: unknown[]; readMb: number }> => {
    const { ms, status, body } = await timedFetch(url, { method: 'POST', body: `${statement} FORMAT JSONCompact` });
    const answer = body as { data?: unknown[][]; totals?: unknown[]; statistics?: { bytes_read: number } };
    if (status !== 200 || !Array.isArray(answer.data)) throw new Error(`ClickHouse: ${status} ${String(body).slice(0, 500)}`);
    return { ms, rows: answer.data, ...(answer.totals && { totals: answer.totals }), readMb: (answer.statistics?.bytes_read ?? Number.NaN) / 1e6 };
  };
}

// ---- The run ------------------------------------------------------------------------------------

const project = await benchProject(DATASET, { clickhouse, config });
const team = project.projectId;
const viaEndpoint = endpoint(project);
const viaClickHouse = direct();
const handOf = async (insight: Insight): Promise<Answer> => {
  const { ms, rows, totals } = await viaClickHouse(insight.hand(team, new Date()));
  return { ms, numbers: insight.fromHand(rows, totals) };
};

const endpointMs: number[][] = INSIGHTS.map(() => []);
const handMs: number[][] = INSIGHTS.map(() => []);
const checked: string[] = INSIGHTS.map(() => '');
console.log(`warming up, then ${rounds} rounds of ${INSIGHTS.length} insights each way`);
for (let round = -1; round < rounds; round++) {
  for (const [i, insight] of INSIGHTS.entries()) {
    let fromEndpoint: Answer | undefined;
    let fromHand: Answer | undefined;
    const endpointTurn = async () => {
      fromEndpoint = await viaEndpoint(insight);
    };
    const handTurn = async () => {
      fromHand = await handOf(insight);
    };
    // Round -1 is the warm-up; the order then swaps every round, so drift falls on both alike.
    if (round % 2 === 0) await handTurn().then(endpointTurn);
    else await endpointTurn().then(handTurn);
    const wrong = differences(fromEndpoint!.numbers, fromHand!.numbers);
    if (wrong.length) {
      console.error(`\n\nMISMATCH: the endpoint and the hand-written query disagree on ${insight.name} (${wrong.length} numbers); no timing means anything until they agree:`);
      for (const line of wrong.slice(0, 20)) console.error(`  ${line}`);
      await clickhouse.close();
      process.exit(1);
    }
    const numbers = [...fromEndpoint!.numbers.values()];
    checked[i] = `${numbers.length} agree, sum ${numbers.reduce((a, b) => a + b, 0)}`;
    if (round >= 0) {
      endpointMs[i]!.push(fromEndpoint!.ms);
      handMs[i]!.push(fromHand!.ms);
    }
  }
  if (round >= 0) process.stdout.write(`\rround ${round + 1} of ${rounds}`);
}
process.stdout.write('\n');

/** A statement timed alone: a warm-up, then the median of 3. */
async function timeAlone(statement: string): Promise<{ ms: number; readMb: number }> {
  const { readMb } = await viaClickHouse(statement);
  const samples: number[] = [];
  for (let r = 0; r < 3; r++) samples.push((await viaClickHouse(statement)).ms);
  return { ms: median(samples), readMb };
}

/** Every statement the endpoint runs for an insight, read from `system.processes` while it runs (query_log is off on this server). */
async function statementsOf(insight: Insight, i: number): Promise<string[]> {
  const clientQueryId = `insights-bench-${i}-${Date.now()}`;
  const seen = new Set<string>();
  let running = true;
  const watch = (async () => {
    while (running) {
      const rows = await clickhouse.query<{ query: string }>(sql`SELECT query FROM system.processes WHERE startsWith(query_id, ${`${team}_${clientQueryId}_`})`);
      // The client's FORMAT is added back by `direct`.
      for (const row of rows) seen.add(row.query.replace(/\s+FORMAT\s+\w+\s*$/i, ''));
      await sleep(5);
    }
  })();
  await viaEndpoint(insight, clientQueryId);
  running = false;
  await watch;
  return [...seen];
}

const endpointMedian = endpointMs.map(median);
const handMedian = handMs.map(median);
const ratios = INSIGHTS.map((_, i) => handMedian[i]! / endpointMedian[i]!);
table(
  INSIGHTS.map((insight, i) => ({
    insight: insight.name,
    'endpoint ms': endpointMedian[i]!,
    'hand-written ms': handMedian[i]!,
    'ratio (hand/endpoint)': ratios[i]!,
    numbers: checked[i]!,
  })),
);

console.log("each statement timed alone (median of 3), the endpoint's as watched in system.processes, and how much ClickHouse read:");
const statements: Record<string, string | number>[] = [];
for (const [i, insight] of INSIGHTS.entries()) {
  const kind = insight.name.split(':')[0]!;
  const ran = [...(await statementsOf(insight, i)).map((statement) => ({ by: 'endpoint', statement })), { by: 'hand-written', statement: insight.hand(team, new Date()) }];
  for (const { by, statement } of ran) {
    const { ms, readMb } = await timeAlone(statement);
    statements.push({ insight: kind, by, ms, 'read MB': readMb, statement: `${statement.replace(/\s+/g, ' ').slice(0, 90)}…` });
  }
}
table(statements);
console.log(`project ${team}, ${total.toLocaleString('en')} events, ${rounds} rounds; medians; the numbers of each insight agreed both ways in every round`);

await clickhouse.close();
const worst = Math.min(...ratios);
console.log(`RESULT trends_ms=${endpointMedian[0]!.toFixed(1)} funnel_ms=${endpointMedian[1]!.toFixed(1)} retention_ms=${endpointMedian[2]!.toFixed(1)} worst_ratio=${worst.toFixed(2)}`);
