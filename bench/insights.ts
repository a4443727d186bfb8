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
 * The project's queries take events' persons as INSIGHTS_BENCH_PERSONS_ON_EVENTS says (its
 * `modifiers.personsOnEventsMode`; default person_id_override_properties_joined, `disabled` for
 * the identity tables' join), and the hand-written statements join persons the same way; in the
 * override mode the worker's override squash runs first, as it does daily.
 * Run: npx tsx bench/insights.ts
 */
import { loadConfig } from '@tributary/config';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { benchProject, squashOverrides, type BenchProject } from './bench-dataset.js';
import { readCredentialsOrExit } from './events.js';
import { directClickHouse, sleep, timedFetch } from './http-timing.js';
import { INSIGHTS, differences, insightsDataset, type Insight, type Numbers } from './insights-kinds.js';
import { median, table } from './lib.js';

const total = Number(process.env.INSIGHTS_BENCH_EVENTS ?? 5_000_000);
const rounds = Number(process.env.INSIGHTS_BENCH_ROUNDS ?? 5);
const DATASET = insightsDataset(total, 'insights-bench', Boolean(process.env.INSIGHTS_BENCH_RELOAD));

const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const { TRIBUTARY_URL } = await readCredentialsOrExit();
const clickhouse = createClickHouse(config, { requestTimeoutMs: 900_000 });

// ---- Sending them --------------------------------------------------------------------------------

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

// ---- The run ------------------------------------------------------------------------------------

const project = await benchProject(DATASET, { clickhouse, config });
const team = project.projectId;
const personsOnEvents = process.env.INSIGHTS_BENCH_PERSONS_ON_EVENTS ?? 'person_id_override_properties_joined';
const overridesOnly = personsOnEvents !== 'disabled';
const patched = await timedFetch(`${TRIBUTARY_URL}/api/projects/${team}/`, {
  method: 'PATCH',
  headers: { authorization: `Bearer ${project.personalApiKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({ modifiers: { personsOnEventsMode: personsOnEvents } }),
});
if (patched.status !== 200) throw new Error(`setting the project's persons-on-events mode: ${patched.status} ${JSON.stringify(patched.body)}`);
console.log(`persons on events: ${personsOnEvents}`);
if (overridesOnly) {
  const squash = await squashOverrides({ clickhouse, config });
  console.log(`override squash (the worker's daily job): ${squash.distinctIds.toLocaleString('en')} moved distinct ids rewritten in ${squash.seconds.toFixed(1)} s`);
}
const viaEndpoint = endpoint(project);
const viaClickHouse = directClickHouse(config);
const handOf = async (insight: Insight): Promise<Answer> => {
  const { ms, rows, totals } = await viaClickHouse(insight.hand(team, new Date(), overridesOnly));
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
  const ran = [...(await statementsOf(insight, i)).map((statement) => ({ by: 'endpoint', statement })), { by: 'hand-written', statement: insight.hand(team, new Date(), overridesOnly) }];
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
