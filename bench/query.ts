/**
 * The HogQL query endpoint against ClickHouse alone: ten typical queries (counts by event over
 * 30 days, a property breakdown, unique users per day, a person-property filter through the
 * join, a windowFunnel, a p90, top paths, events per hour of one day, sessions, the newest
 * events) on QUERY_BENCH_EVENTS events (default 5,000,000) of one project, each timed through
 * `POST /api/projects/:id/query/` at the front door and as the same printed SQL sent straight to
 * ClickHouse over HTTP with the endpoint's settings, in one run. Also times parse + print
 * in-process. Needs `make up`. Ends with one line:
 * RESULT query_p50_ms=<n> direct_p50_ms=<n> ratio=<direct/endpoint> parse_print_us=<n>
 *
 * The events (the shape of `realisticEvent`, spread over the 30 days before the load, 10,000
 * distinct ids) and one person per distinct id go straight into ClickHouse with INSERT ... SELECT
 * over `numbers()` (bench/bench-dataset.ts), into a project made with the CLI on the first run;
 * its id and key are kept in .tributary/query-bench.json (one project per event count) and the
 * data reused while it is complete and under a day old (QUERY_BENCH_RELOAD=1 loads it again).
 * Each query runs once to warm up, then QUERY_BENCH_ROUNDS times (default 5) each way, the
 * order swapped every round. QUERY_BENCH_DIRECT_ONLY=1 runs without the endpoint (no RESULT).
 * Run: npx tsx bench/query.ts
 */
import { loadConfig } from '@tributary/config';
import { createClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser, parseSelect, printQuery } from '@tributary/hogql';
import { queryClickHouseSettings } from '../services/api/src/query/query-settings.js';
import { benchProject, type BenchProject, type Dataset } from './bench-dataset.js';
import { readCredentialsOrExit } from './events.js';
import { median, percentile, table } from './lib.js';
import { QUERIES } from './query-bench-queries.js';

const total = Number(process.env.QUERY_BENCH_EVENTS ?? 5_000_000);
const rounds = Number(process.env.QUERY_BENCH_ROUNDS ?? 5);
const parseIterations = Number(process.env.QUERY_BENCH_PARSE_ITERATIONS ?? 200);
const directOnly = Boolean(process.env.QUERY_BENCH_DIRECT_ONLY);

const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const { TRIBUTARY_URL } = await readCredentialsOrExit();
const clickhouse = createClickHouse(config, { requestTimeoutMs: 900_000 });
const settings = queryClickHouseSettings(config);

/** The events: `realisticEvent`'s, the event name drawn by a hash (one in five a $pageview, as there) so every user has both steps of the funnel. */
const DATASET: Dataset = {
  slug: 'query-bench',
  events: total,
  spanDays: 30,
  distinctIds: 10_000,
  eventSql: "if(intHash32(number) % 5 = 0, '$pageview', 'button clicked')",
  distinctIdSql: 'number % 10000',
  personSql: (n) => n,
  reload: Boolean(process.env.QUERY_BENCH_RELOAD),
};

// ---- Timing ---------------------------------------------------------------------------------

interface Answer {
  ms: number;
  rows: number;
  /** The endpoint's own `timings` (seconds by step: ./parse, ./print, ./clickhouse_execute, .), when it gives them. */
  timings?: Record<string, number>;
}

const elapsedMs = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;
const isConnectionReset = (error: unknown) => error instanceof TypeError && /ECONNRESET|EPIPE|other side closed|socket/i.test(String((error as { cause?: unknown }).cause ?? error.message));

/** A keep-alive connection the server closed as it was reused fails before any answer: sent again, the retry alone is timed. */
async function timedFetch(url: string, init: RequestInit): Promise<{ response: Response; body: unknown; started: bigint }> {
  for (let attempt = 0; ; attempt++) {
    const started = process.hrtime.bigint();
    try {
      const response = await fetch(url, init);
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Left as text for the error message.
      }
      return { response, body, started };
    } catch (error) {
      if (attempt > 0 || !isConnectionReset(error)) throw error;
    }
  }
}

function endpoint(project: BenchProject) {
  const noted = new Set<string>();
  const url = `${TRIBUTARY_URL}/api/projects/${project.projectId}/query/`;
  return async (hogql: string, printed?: string): Promise<Answer> => {
    const { response, body, started } = await timedFetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.personalApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query: hogql } }),
    });
    const ms = elapsedMs(started);
    const answer = body as { results?: unknown[]; clickhouse?: unknown; timings?: { k: string; t: number }[] };
    if (!response.ok || !Array.isArray(answer.results)) throw new Error(`endpoint: ${response.status} ${JSON.stringify(body).slice(0, 500)} for ${hogql}`);
    if (printed && typeof answer.clickhouse === 'string' && answer.clickhouse !== printed && !noted.has(hogql)) {
      noted.add(hogql);
      console.log(`note: the endpoint ran other SQL than the bench printed for ${hogql}:\n  endpoint: ${answer.clickhouse}\n  bench:    ${printed}`);
    }
    const timings = Array.isArray(answer.timings) ? Object.fromEntries(answer.timings.map(({ k, t }) => [k, t])) : undefined;
    return { ms, rows: answer.results.length, ...(timings && { timings }) };
  };
}

function direct() {
  const params = new URLSearchParams({ database: config.clickhouseDatabase, user: config.clickhouseUser, ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, String(v)])) });
  if (config.clickhousePassword) params.set('password', config.clickhousePassword);
  const url = `${config.clickhouseUrl.replace(/\/$/, '')}/?${params}`;
  return async (clickhouseSql: string): Promise<Answer> => {
    const { response, body, started } = await timedFetch(url, { method: 'POST', body: `${clickhouseSql} FORMAT JSONCompact` });
    const ms = elapsedMs(started);
    const answer = body as { data?: unknown[] };
    if (!response.ok || !Array.isArray(answer.data)) throw new Error(`ClickHouse: ${response.status} ${String(body).slice(0, 500)}`);
    return { ms, rows: answer.data.length };
  };
}

/**
 * µs of parse + print of each query, after a warm-up, in this process. `cold` makes each text new
 * (a comment with the iteration's number), so the parser runs rather than its cache of trees.
 */
async function parsePrintTimes(team: number, cold: boolean): Promise<number[][]> {
  const samples: number[][] = QUERIES.map(() => []);
  const text = (hogql: string, i: number) => (cold ? `${hogql} -- ${i}` : hogql);
  for (let i = 0; i < 20; i++) for (const [, hogql] of QUERIES) printQuery(await parseSelect(text(hogql, -1 - i)), { teamId: team });
  for (let i = 0; i < parseIterations; i++) {
    for (const [q, [, hogql]] of QUERIES.entries()) {
      const query = text(hogql, i);
      const started = process.hrtime.bigint();
      printQuery(await parseSelect(query), { teamId: team });
      samples[q]!.push(Number(process.hrtime.bigint() - started) / 1e3);
    }
  }
  return samples;
}

// ---- The run ------------------------------------------------------------------------------------

await loadHogQLParser();
const project = await benchProject(DATASET, { clickhouse, config });
const team = project.projectId;
const printed = await Promise.all(QUERIES.map(async ([, hogql]) => printQuery(await parseSelect(hogql), { teamId: team }).clickhouse));
const viaEndpoint = endpoint(project);
const viaClickHouse = direct();

if (!directOnly) {
  const probe = await fetch(`${TRIBUTARY_URL}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${project.personalApiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query: 'select 1' } }),
  });
  if (!probe.ok) {
    console.error(`the query endpoint answered ${probe.status}: ${(await probe.text()).slice(0, 300)}\n(QUERY_BENCH_DIRECT_ONLY=1 times ClickHouse alone)`);
    process.exit(1);
  }
}

const parsePrint = await parsePrintTimes(team, true);
const parsePrintCached = await parsePrintTimes(team, false);

const endpointMs: number[][] = QUERIES.map(() => []);
/** Per query, what the endpoint says it spent parsing + printing, and waiting for ClickHouse (ms). */
const apiParsePrintMs: number[][] = QUERIES.map(() => []);
const apiClickHouseMs: number[][] = QUERIES.map(() => []);
const directMs: number[][] = QUERIES.map(() => []);
const rows: { endpoint: number; direct: number }[] = QUERIES.map(() => ({ endpoint: Number.NaN, direct: Number.NaN }));
console.log(`warming up, then ${rounds} rounds of ${QUERIES.length} queries${directOnly ? ' (ClickHouse only)' : ' each way'}`);
for (let round = -1; round < rounds; round++) {
  for (const [q, [, hogql]] of QUERIES.entries()) {
    const viaEndpointTurn = async () => {
      if (directOnly) return;
      const answer = await viaEndpoint(hogql, printed[q]);
      rows[q]!.endpoint = answer.rows;
      if (round < 0) return;
      endpointMs[q]!.push(answer.ms);
      const t = answer.timings;
      if (t?.['./parse'] !== undefined) apiParsePrintMs[q]!.push(1000 * (t['./parse'] + (t['./print'] ?? 0)));
      if (t?.['./clickhouse_execute'] !== undefined) apiClickHouseMs[q]!.push(1000 * t['./clickhouse_execute']);
    };
    const directTurn = async () => {
      const answer = await viaClickHouse(printed[q]!);
      rows[q]!.direct = answer.rows;
      if (round >= 0) directMs[q]!.push(answer.ms);
    };
    // Round -1 is the warm-up; the order then swaps every round, so drift falls on both alike.
    if (round % 2 === 0) await directTurn().then(viaEndpointTurn);
    else await viaEndpointTurn().then(directTurn);
  }
  if (round >= 0) process.stdout.write(`\rround ${round + 1} of ${rounds}`);
}
process.stdout.write('\n');

table(
  QUERIES.map(([name], q) => ({
    query: name,
    rows: directOnly ? rows[q]!.direct : `${rows[q]!.endpoint} / ${rows[q]!.direct}`,
    ...(directOnly ? {} : { 'endpoint ms': median(endpointMs[q]!) }),
    'direct ms': median(directMs[q]!),
    ...(directOnly
      ? {}
      : {
          ratio: median(directMs[q]!) / median(endpointMs[q]!),
          'added ms': median(endpointMs[q]!) - median(directMs[q]!),
          'api parse+print ms': median(apiParsePrintMs[q]!),
          'api clickhouse ms': median(apiClickHouseMs[q]!),
        }),
    'parse+print µs': median(parsePrint[q]!),
  })),
);
const allParsePrint = parsePrint.flat();
console.log(`parse+print of a new text: median ${median(allParsePrint).toFixed(0)} µs, p99 ${percentile(allParsePrint, 99).toFixed(0)} µs, slowest query's median ${Math.max(...parsePrint.map(median)).toFixed(0)} µs`);
console.log(`parse+print of a text seen before (the parsed-tree cache): median ${median(parsePrintCached.flat()).toFixed(0)} µs, p99 ${percentile(parsePrintCached.flat(), 99).toFixed(0)} µs`);
console.log(`rows: endpoint / direct (direct may hold the one extra row that tells the endpoint there are more); project ${team}, ${total.toLocaleString('en')} events`);
if (!directOnly) console.log("api parse+print ms, api clickhouse ms: the endpoint's own timings (NaN when it gives none)");

const directP50 = median(directMs.flat());
const parsePrintUs = median(allParsePrint);
await clickhouse.close();
if (directOnly) {
  console.log(`direct only: direct_p50_ms=${directP50.toFixed(1)} parse_print_us=${parsePrintUs.toFixed(0)}`);
} else {
  const endpointP50 = median(endpointMs.flat());
  console.log(`RESULT query_p50_ms=${endpointP50.toFixed(1)} direct_p50_ms=${directP50.toFixed(1)} ratio=${(directP50 / endpointP50).toFixed(2)} parse_print_us=${parsePrintUs.toFixed(0)}`);
}
