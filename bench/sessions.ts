/**
 * Sessions computed at query time (the HogQL `sessions` select over events, as WebOverviewQuery
 * and WebStatsTableQuery run it) against a sessions table kept at ingest (what a materialized view
 * on events would keep: one row of aggregate states per session and insert block), on
 * SESSIONS_BENCH_EVENTS events (default 5,000,000) of the insights bench's shape (56 days, 200,000
 * distinct ids, sessions of 20 consecutive events) loaded into a throwaway team id straight into
 * ClickHouse, removed at the end with the kept table. Times each question SESSIONS_BENCH_ROUNDS
 * times (default 3) after a warm-up, and what keeping the table costs an insert: a batch of events
 * alone, then the same batch with the view's INSERT ... SELECT of its sessions beside it.
 * Needs the stores of `make up`. Run: npx tsx bench/sessions.ts
 * Ends with: RESULT overview_query_time_ms=<n> overview_kept_ms=<n> insert_overhead=<ratio>
 */
import { randomInt } from 'node:crypto';
import { EVENTS_TABLE_COLUMNS, Sql, createClickHouse, materializedColumnsOf, serverOf } from '@tributary/clickhouse';
import { loadHogQLParser, printQuery, type SelectLike } from '@tributary/hogql';
import { testConfig } from '@tributary/test-support';
import { InsightCalendar } from '../services/api/src/query/insights/toolkit/insight-calendar.js';
import { webOverviewQuery } from '../services/api/src/query/insights/web-analytics/web-overview-query.js';
import { webStatsTableQuery } from '../services/api/src/query/insights/web-analytics/web-stats-table-query.js';
import { webPeriods } from '../services/api/src/query/insights/web-analytics/web-sessions.js';
import { queryClickHouseSettings } from '../services/api/src/query/query-settings.js';
import { PROPERTIES_SQL } from './bench-dataset.js';
import { insightsDataset } from './insights-kinds.js';
import { median, table } from './lib.js';

const total = Number(process.env.SESSIONS_BENCH_EVENTS ?? 5_000_000);
const rounds = Number(process.env.SESSIONS_BENCH_ROUNDS ?? 3);
const SPAN_DAYS = 56;
const BATCH = 1_000_000;
const team = 90_000 + randomInt(10_000);
const kept = `sessions_bench_${team}`;

const config = testConfig();
const clickhouse = createClickHouse(config, { requestTimeoutMs: 900_000 });
const settings = queryClickHouseSettings(config);
const dataset = insightsDataset(total, 'sessions-bench', true);
const end = Math.floor(Date.now() / 1000);
const spanS = SPAN_DAYS * 86_400;

const eventsSelect = (start: number, rows: number) => `
  SELECT generateUUIDv4(), ${dataset.eventSql}, ${PROPERTIES_SQL},
         toDateTime(${end - spanS}) + intDiv(number * ${spanS}, ${total}), number % 1000, ${team},
         concat('user-', toString(${dataset.distinctIdSql})), '', now(), toUUID('00000000-0000-0000-0000-000000000000'), '{}', toDateTime(${end - spanS}),
         '', '', '', '', '', now()
  FROM (SELECT number + ${start} AS number FROM numbers(${rows}))`;

/** The events of the block of rows `start` to `start + BATCH` (by their timestamps, which the rows' numbers set). */
const blockWhere = (start: number) =>
  `team_id = ${team} AND timestamp >= toDateTime(${end - spanS}) + intDiv(${start} * ${spanS}, ${total}) AND timestamp < toDateTime(${end - spanS}) + intDiv(${start + BATCH} * ${spanS}, ${total})`;

/** What the kept table's view would insert for a block of events: its sessions' aggregate states. */
const keptSelect = (where: string) => `
  SELECT team_id, visitParamExtractString(properties, '$session_id') AS session_id,
         minState(timestamp) AS start, maxState(timestamp) AS end, argMinState(distinct_id, timestamp) AS distinct_id,
         argMinState(tuple(visitParamExtractString(properties, '$pathname'), visitParamExtractString(properties, '$referring_domain'), visitParamExtractString(properties, 'utm_source')), timestamp) AS entry,
         countIfState(event = '$pageview') AS pageviews, countIfState(event = '$autocapture') AS autocaptures
  FROM events WHERE ${where} GROUP BY team_id, session_id`;

const timed = async (statement: string): Promise<number> => {
  const started = performance.now();
  await clickhouse.queryCompact(Sql.trusted(statement), { settings });
  return performance.now() - started;
};
const command = (statement: string) => clickhouse.command(Sql.trusted(statement));

async function load(): Promise<void> {
  const started = performance.now();
  for (let start = 0; start < total; start += BATCH) {
    await command(`INSERT INTO events (${EVENTS_TABLE_COLUMNS.join(', ')}) ${eventsSelect(start, Math.min(BATCH, total - start))}`);
    process.stdout.write(`\rinserted ${Math.min(start + BATCH, total).toLocaleString('en')} of ${total.toLocaleString('en')} events into team ${team}`);
  }
  await command(`INSERT INTO person_distinct_id (team_id, distinct_id, person_id, is_deleted, version) SELECT ${team}, concat('user-', toString(number)), generateUUIDv4(), 0, 0 FROM numbers(200000)`);
  console.log(`\nloaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function keptTable(): Promise<void> {
  await command(`CREATE TABLE ${kept} (team_id Int64, session_id String, start AggregateFunction(min, DateTime('UTC')), end AggregateFunction(max, DateTime('UTC')),
    distinct_id AggregateFunction(argMin, String, DateTime('UTC')), entry AggregateFunction(argMin, Tuple(String, String, String), DateTime('UTC')),
    pageviews AggregateFunction(countIf, UInt8), autocaptures AggregateFunction(countIf, UInt8)) ENGINE = AggregatingMergeTree() ORDER BY (team_id, session_id)`);
  // As the view would, block by block: one insert per million events, merged later.
  for (let start = 0; start < total; start += BATCH) {
    await command(`INSERT INTO ${kept} ${keptSelect(blockWhere(start))}`);
  }
  await command(`OPTIMIZE TABLE ${kept} FINAL`);
}

/** The overview from the kept table: each session's states merged, then the same sums as the query-time form. */
function keptOverview(from: number, to: number, previousFrom: number): string {
  const cur = `start >= toDateTime(${from}) AND start < toDateTime(${to})`;
  const prev = `start >= toDateTime(${previousFrom}) AND start < toDateTime(${from})`;
  return `SELECT uniqExactIf(person_id, ${cur}), uniqExactIf(person_id, ${prev}), sumIf(pageviews, ${cur}), sumIf(pageviews, ${prev}), countIf(${cur}), countIf(${prev}),
      sumIf(duration, ${cur}), sumIf(duration, ${prev}), sumIf(bounce, ${cur}), sumIf(bounce, ${prev})
    FROM (SELECT s.*, pdi.person_id AS person_id FROM (
      SELECT session_id, minMerge(start) AS start, maxMerge(end) AS end, argMinMerge(distinct_id) AS distinct_id, countIfMerge(pageviews) AS pageviews,
             dateDiff('second', start, end) AS duration, if(pageviews + countIfMerge(autocaptures) > 1 OR duration >= 10, 0, 1) AS bounce
      FROM ${kept} WHERE team_id = ${team} GROUP BY session_id HAVING start >= toDateTime(${previousFrom}) AND start < toDateTime(${to}) AND pageviews > 0) AS s
    ANY LEFT JOIN (SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_id WHERE team_id = ${team} GROUP BY distinct_id) AS pdi USING distinct_id)`;
}

async function main(): Promise<void> {
  await loadHogQLParser();
  const server = await serverOf(clickhouse);
  const materialized = await materializedColumnsOf(clickhouse);
  const print = (ast: SelectLike) => printQuery(ast, { teamId: team, server, materialized }).clickhouse;
  const filters = { now: new Date(), cohorts: new Map() };
  const request = { dateRange: { date_from: '-7d', date_to: null }, compareFilter: { compare: true } };
  const periods = webPeriods(request, new InsightCalendar('UTC'), new Date());
  try {
    await load();
    const questions: [string, string][] = [
      ['WebOverviewQuery, 7 days against the 7 before', print(webOverviewQuery({ kind: 'WebOverviewQuery', ...request }, periods, { filters }))],
      ['WebStatsTableQuery by channel', print(webStatsTableQuery({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialChannelType', ...request }, periods, { filters }, 10))],
      ['WebStatsTableQuery by page', print(webStatsTableQuery({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', ...request }, periods, { filters }, 10))],
      ['HogQL: SELECT count() FROM sessions (56 days)', print({ node: 'SelectQuery', select: [{ node: 'Call', name: 'count', args: [] }], select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['sessions'] } } })],
    ];
    const keptStarted = performance.now();
    await keptTable();
    const keptBuildS = (performance.now() - keptStarted) / 1000;
    const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
    questions.push(['kept table: the same overview', keptOverview(seconds(periods.current.from), seconds(periods.current.to), seconds(periods.previous!.from))]);
    const rows: Record<string, string | number>[] = [];
    const medians: Record<string, number> = {};
    for (const [name, statement] of questions) {
      await timed(statement);
      const samples: number[] = [];
      for (let i = 0; i < rounds; i++) samples.push(await timed(statement));
      medians[name] = median(samples);
      rows.push({ question: name, median_ms: Math.round(median(samples)), min_ms: Math.round(Math.min(...samples)), max_ms: Math.round(Math.max(...samples)) });
    }
    table(rows);

    // What keeping the table adds to an insert: the view's INSERT ... SELECT of the block's sessions.
    const plain: number[] = [];
    const withView: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const started = performance.now();
      await command(`INSERT INTO events (${EVENTS_TABLE_COLUMNS.join(', ')}) ${eventsSelect(total + i * 2 * BATCH, BATCH)}`);
      plain.push(performance.now() - started);
      const viewStarted = performance.now();
      const block = total + (i * 2 + 1) * BATCH;
      await command(`INSERT INTO events (${EVENTS_TABLE_COLUMNS.join(', ')}) ${eventsSelect(block, BATCH)}`);
      await command(`INSERT INTO ${kept} ${keptSelect(blockWhere(block))}`);
      withView.push(performance.now() - viewStarted);
    }
    const overhead = median(withView) / median(plain);
    console.log(`kept table built from the ${total.toLocaleString('en')} events in ${keptBuildS.toFixed(1)} s; insert of ${BATCH.toLocaleString('en')} events: ${Math.round(median(plain))} ms alone, ${Math.round(median(withView))} ms with the view's sessions`);
    console.log(`RESULT overview_query_time_ms=${Math.round(medians[questions[0]![0]]!)} overview_kept_ms=${Math.round(medians['kept table: the same overview']!)} insert_overhead=${overhead.toFixed(2)}`);
  } finally {
    await command(`DROP TABLE IF EXISTS ${kept}`);
    await command(`ALTER TABLE events DELETE WHERE team_id = ${team}`);
    await command(`ALTER TABLE person_distinct_id DELETE WHERE team_id = ${team}`);
    await clickhouse.close();
  }
}

await main();
