/**
 * How a funnel's cost grows with its steps (issue 60: linear in its steps, and a 20-step funnel
 * within a query's memory): ordered funnels of 3, 5, 10 and 20 steps over the insights bench's
 * events (bench/insights-kinds.ts, the steps cycling through its three events, a 14-day window,
 * 30 days), each alone and broken down by `$browser`, timed through the endpoint (`refresh:
 * force_blocking`) while `system.processes` is watched for the statements' peak memory. The same
 * dataset as bench/insights.ts (.tributary/insights-bench.json). Needs `make up`.
 * A funnel the endpoint refuses (its memory or time limit) is listed as FAILED. Ends with one line:
 * RESULT steps20_ms=<n> steps20_breakdown_ms=<n> peak_mb=<max over funnels> ms_per_step=<(20-step - 3-step) / 17> refused=<n>
 * Run: npx tsx bench/funnel-steps.ts
 */
import { loadConfig } from '@tributary/config';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { benchProject } from './bench-dataset.js';
import { readCredentialsOrExit } from './events.js';
import { sleep, timedFetch } from './http-timing.js';
import { insightsDataset } from './insights-kinds.js';
import { median, table } from './lib.js';

const total = Number(process.env.INSIGHTS_BENCH_EVENTS ?? 5_000_000);
const rounds = Number(process.env.FUNNEL_STEPS_ROUNDS ?? 3);
const STEP_COUNTS = [3, 5, 10, 20];
const EVENTS = ['$pageview', 'button clicked', 'signed up'];

const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const { TRIBUTARY_URL } = await readCredentialsOrExit();
const clickhouse = createClickHouse(config, { requestTimeoutMs: 900_000 });
const project = await benchProject(insightsDataset(total, 'insights-bench', Boolean(process.env.INSIGHTS_BENCH_RELOAD)), { clickhouse, config });

const funnel = (steps: number, broken: boolean) => ({
  kind: 'FunnelsQuery',
  series: Array.from({ length: steps }, (_, k) => ({ kind: 'EventsNode', event: EVENTS[k % EVENTS.length] })),
  dateRange: { date_from: '-30d' },
  funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
  ...(broken && { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }),
});

interface Run {
  ms: number;
  peakMb: number;
  refused: boolean;
}

/** One funnel through the endpoint, the peak memory of its statements watched while it runs. */
async function run(query: object): Promise<Run> {
  const clientQueryId = `funnel-steps-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  let peak = 0;
  let running = true;
  const watch = (async () => {
    while (running) {
      const rows = await clickhouse.query<{ memory: number }>(sql`SELECT toFloat64(max(memory_usage)) AS memory FROM system.processes WHERE startsWith(query_id, ${`${project.projectId}_${clientQueryId}_`})`);
      peak = Math.max(peak, Number(rows[0]?.memory ?? 0));
      await sleep(20);
    }
  })();
  const { ms, status, body } = await timedFetch(`${TRIBUTARY_URL}/api/projects/${project.projectId}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${project.personalApiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, refresh: 'force_blocking', client_query_id: clientQueryId }),
  });
  running = false;
  await watch;
  const refused = status === 400 && /query_memory_limit|query_time_limit/.test(JSON.stringify(body));
  if (status !== 200 && !refused) throw new Error(`endpoint: ${status} ${JSON.stringify(body).slice(0, 300)}`);
  return { ms, peakMb: peak / 1e6, refused };
}

const rows: { funnel: string; ms: number | string; 'peak MB': number }[] = [];
const figures = new Map<string, Run>();
for (const broken of [false, true]) {
  for (const steps of STEP_COUNTS) {
    const name = `${steps} steps${broken ? ', by $browser' : ''}`;
    const runs: Run[] = [];
    for (let round = 0; round < rounds; round++) {
      const result = await run(funnel(steps, broken));
      runs.push(result);
      if (result.refused) break;
    }
    const refused = runs.some((r) => r.refused);
    const figure = { ms: refused ? Infinity : median(runs.map((r) => r.ms)), peakMb: Math.max(...runs.map((r) => r.peakMb)), refused };
    figures.set(name, figure);
    rows.push({ funnel: name, ms: refused ? 'FAILED' : Math.round(figure.ms), 'peak MB': Math.round(figure.peakMb) });
    console.log(`${name}: ${refused ? 'FAILED' : `${Math.round(figure.ms)} ms`}, peak ${Math.round(figure.peakMb)} MB`);
  }
}
table(rows);
const at = (name: string) => figures.get(name)!;
const perStep = (at('20 steps').ms - at('3 steps').ms) / 17;
const refused = [...figures.values()].filter((f) => f.refused).length;
console.log(`project ${project.projectId}, ${total.toLocaleString('en-US')} events, medians of ${rounds}`);
console.log(
  `RESULT steps20_ms=${at('20 steps').ms.toFixed(1)} steps20_breakdown_ms=${at('20 steps, by $browser').ms.toFixed(1)} peak_mb=${Math.max(...[...figures.values()].map((f) => f.peakMb)).toFixed(0)} ms_per_step=${perStep.toFixed(1)} refused=${refused}`,
);
await clickhouse.close();
