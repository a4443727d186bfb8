/**
 * Answers at scale against what the data needs (issue 60): on SCALE_BENCH_EVENTS events (default
 * 50,000,000) of the insights bench's dataset (bench/insights-kinds.ts, generated in ClickHouse by
 * bench/bench-dataset.ts), times through the endpoint the query bench's ten HogQL queries, the
 * insights bench's three insights, the events list's first page (and the console's events page,
 * an EventsQuery), and a dashboard made from the built-in "Product analytics" template; beside
 * each, in the same run, its scan floor: a `count()` sent straight to ClickHouse with the same
 * WHERE, reading the same columns (`NOT ignore(...)`), a property's `mat_*` column where the
 * events table has one for it. Needs `make up` (or SCALE_BENCH_URL, an api to time). Ends with
 * RESULT events=<n> worst_floor_ratio=<max endpoint_ms/floor_ms> p50_ms=<n> dashboard_ms=<n> load_s=<n>
 *
 * The project is kept in .tributary/scale-bench.json (one per event count) and reused while
 * complete and under a day old (SCALE_BENCH_RELOAD=1 loads it again); load_s is how long its
 * load took, merges included. Each request runs once to warm up, then SCALE_BENCH_ROUNDS times
 * (default 3) beside its floor, the order swapped every round; medians.
 * A query the endpoint refuses (its memory or time limit) is listed as FAILED and its ratio is
 * Infinity.
 * The project's queries take events' persons as SCALE_BENCH_PERSONS_ON_EVENTS says (its
 * `modifiers.personsOnEventsMode`, set through the API as an operator would; default
 * person_id_override_properties_joined, `disabled` for the identity tables' join); in the override
 * mode the worker's override squash runs first, as it does daily, and its time is printed.
 * Run: SCALE_BENCH_EVENTS=1000000 npx tsx bench/scale.ts
 */
import { loadConfig } from '@tributary/config';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { loadHogQLParser } from '@tributary/hogql';
import { builtInTemplate } from '../services/api/src/dashboards/built-in-templates.js';
import { benchProject, squashOverrides } from './bench-dataset.js';
import { readCredentialsOrExit } from './events.js';
import { directClickHouse, timedFetch } from './http-timing.js';
import { INSIGHTS, insightsDataset } from './insights-kinds.js';
import { median, table } from './lib.js';
import { QUERIES } from './query-bench-queries.js';

const total = Number(process.env.SCALE_BENCH_EVENTS ?? 50_000_000);
const rounds = Number(process.env.SCALE_BENCH_ROUNDS ?? 3);
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const url = process.env.SCALE_BENCH_URL ?? (await readCredentialsOrExit()).TRIBUTARY_URL;
const clickhouse = createClickHouse(config, { requestTimeoutMs: 1_800_000 });
const viaClickHouse = directClickHouse(config);

// ---- Scan floors ---------------------------------------------------------------------------------

/**
 * The rows a query reads (a condition on the project's events) and the columns it reads of them;
 * `properties.KEY` is one property. `identities` are the identity tables it joins (every project
 * row of each, read as the join's subquery reads it).
 */
interface Floor {
  where: string;
  columns: string[];
  identities?: (keyof typeof IDENTITY_COLUMNS)[];
}

/** The columns the printer's person joins read of the identity tables. */
const IDENTITY_COLUMNS = {
  person_distinct_id: ['distinct_id', 'person_id', 'version', 'is_deleted'],
  person: ['id', 'properties', 'created_at', 'is_identified', 'version', 'is_deleted'],
};
const BY_PERSON: Floor['identities'] = ['person_distinct_id'];

const LAST_30_DAYS = 'timestamp > now() - INTERVAL 30 DAY';
const days = (n: number) => `timestamp >= toStartOfDay(now()) - INTERVAL ${n} DAY`;
const pageviews = "event = '$pageview'";
const PERSON_COLUMNS = ['event', 'timestamp', 'distinct_id', 'person_id'];
/** The newest rows a page of 100 shows: every event from the 100th newest on, found before timing. */
const NEWEST_100 = 'timestamp >= {newest100}';

/** The query bench's queries' floors, by name. */
const QUERY_FLOORS: Record<string, Floor> = {
  'counts by event, 30 days': { where: LAST_30_DAYS, columns: ['event'] },
  '$browser breakdown': { where: LAST_30_DAYS, columns: ['properties.$browser'] },
  'unique users per day': { where: LAST_30_DAYS, columns: ['timestamp', 'distinct_id'] },
  'person plan = pro (join)': { where: LAST_30_DAYS, columns: ['event', 'distinct_id', 'person_id'], identities: ['person_distinct_id', 'person'] },
  'windowFunnel per user': { where: LAST_30_DAYS, columns: ['distinct_id', 'timestamp', 'event'] },
  'p90 $screen_width': { where: LAST_30_DAYS, columns: ['properties.$screen_width'] },
  'top paths': { where: `${pageviews} AND ${LAST_30_DAYS}`, columns: ['event', 'properties.$pathname'] },
  'events per hour, one day': { where: 'toDate(timestamp) = today() - 7', columns: ['timestamp'] },
  'sessions, 30 days': { where: LAST_30_DAYS, columns: ['properties.$session_id'] },
  'newest 100 events': { where: NEWEST_100, columns: ['uuid', 'event', 'timestamp', 'distinct_id', 'properties.$current_url'] },
};

/** The insights' floors, in INSIGHTS' order: trends, funnel, retention (which reads each person's first pageview ever). */
const INSIGHT_FLOORS: Floor[] = [
  { where: `${pageviews} AND ${days(30)}`, columns: ['event', 'timestamp', 'properties.$browser'] },
  { where: `event IN ('$pageview', 'button clicked', 'signed up') AND ${days(30)}`, columns: PERSON_COLUMNS, identities: BY_PERSON },
  { where: pageviews, columns: PERSON_COLUMNS, identities: BY_PERSON },
];

/** The dashboard template's tiles' floors, in its order: DAU, WAU, retention, lifecycle (first pageviews ever), referring domains, paths. */
const TILE_FLOORS: Floor[] = [
  { where: `${pageviews} AND ${days(30)}`, columns: PERSON_COLUMNS, identities: BY_PERSON },
  { where: `${pageviews} AND ${days(37)}`, columns: PERSON_COLUMNS, identities: BY_PERSON },
  { where: pageviews, columns: PERSON_COLUMNS, identities: BY_PERSON },
  { where: pageviews, columns: PERSON_COLUMNS, identities: BY_PERSON },
  { where: `${pageviews} AND ${days(14)}`, columns: ['event', 'properties.$referring_domain'] },
  { where: `${pageviews} AND ${days(14)}`, columns: ['event', 'properties.$pathname'] },
];

/** The events table's materialized property columns (`mat_*`), by the property their default expression reads. */
async function materializedColumns(): Promise<Map<string, string>> {
  const rows = await clickhouse.query<{ name: string; expression: string }>(
    sql`SELECT name, default_expression AS expression FROM system.columns WHERE database = ${config.clickhouseDatabase} AND table = 'events' AND startsWith(name, 'mat_')`,
  );
  const byKey = new Map<string, string>();
  for (const { name, expression } of rows) {
    const key = /'((?:[^'\\]|\\.)*)'/.exec(expression)?.[1];
    if (key !== undefined) byKey.set(key, name);
  }
  return byKey;
}

function floorSql(floor: Floor, team: number, materialized: Map<string, string>, newest100: string): string {
  const columns = floor.columns.map((column) => {
    if (!column.startsWith('properties.')) return column;
    const name = materialized.get(column.slice('properties.'.length));
    return name ? `\`${name}\`` : 'properties';
  });
  const where = floor.where.replace('{newest100}', newest100);
  const events = `SELECT count() FROM events WHERE team_id = ${team} AND ${where} AND NOT ignore(${[...new Set(columns)].join(', ')})`;
  const identities = (floor.identities ?? []).map((table) => `(SELECT count() FROM ${table} WHERE team_id = ${team} AND NOT ignore(${IDENTITY_COLUMNS[table].join(', ')}))`);
  return identities.length ? `SELECT (${events}) + ${identities.join(' + ')}` : events;
}

// ---- The endpoint --------------------------------------------------------------------------------

await loadHogQLParser();
const project = await benchProject(insightsDataset(total, 'scale-bench', Boolean(process.env.SCALE_BENCH_RELOAD)), { clickhouse, config });
const team = project.projectId;
const headers = { authorization: `Bearer ${project.personalApiKey}`, 'content-type': 'application/json' };

async function call(method: string, path: string, body?: unknown): Promise<{ ms: number; body: Record<string, unknown> }> {
  const answer = await timedFetch(`${url}/api/projects/${team}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
  return { ms: answer.ms, body: answer.body as Record<string, unknown> };
}
const personsOnEvents = process.env.SCALE_BENCH_PERSONS_ON_EVENTS ?? 'person_id_override_properties_joined';
await call('PATCH', '/', { modifiers: { personsOnEventsMode: personsOnEvents } });
console.log(`persons on events: ${personsOnEvents}`);
if (personsOnEvents !== 'disabled') {
  const squash = await squashOverrides({ clickhouse, config });
  console.log(`override squash (the worker's daily job): ${squash.distinctIds.toLocaleString('en')} moved distinct ids rewritten in ${squash.seconds.toFixed(1)} s`);
}
const query = (body: Record<string, unknown>) => async () => (await call('POST', '/query/', { refresh: 'force_blocking', ...body })).ms;

interface Timed {
  name: string;
  endpoint: () => Promise<number>;
  floor: Floor;
}

const TIMED: Timed[] = [
  ...QUERIES.map(([name, hogql]): Timed => {
    const floor = QUERY_FLOORS[name];
    if (!floor) throw new Error(`no scan floor for the query bench's "${name}"`);
    return { name, endpoint: query({ query: { kind: 'HogQLQuery', query: hogql } }), floor };
  }),
  ...INSIGHTS.map((insight, i): Timed => ({ name: insight.name, endpoint: query({ query: insight.query }), floor: INSIGHT_FLOORS[i]! })),
  {
    name: 'events list, first page',
    endpoint: async () => (await call('GET', '/events/?limit=100')).ms,
    floor: { where: NEWEST_100, columns: ['uuid', 'event', 'properties', 'timestamp', 'timestamp_ms', 'distinct_id', 'elements_chain', 'person_id', 'person_properties'] },
  },
  {
    name: "console's events page (EventsQuery)",
    endpoint: query({ query: { kind: 'EventsQuery', select: ['*'], orderBy: ['timestamp DESC'], after: '-30d', limit: 100 } }),
    floor: { where: NEWEST_100, columns: ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at'] },
  },
];

const template = builtInTemplate('DEFAULT_APP')!;
if (template.tiles.length !== TILE_FLOORS.length) throw new Error(`the dashboard template has ${template.tiles.length} tiles, the bench knows the floors of ${TILE_FLOORS.length}`);
const dashboard = (await call('POST', '/dashboards/', { name: `scale bench ${new Date().toISOString()}`, use_template: 'DEFAULT_APP' })).body;
const dashboardMs = async () => (await call('GET', `/dashboards/${String(dashboard.id)}/?refresh=force_blocking`)).ms;

// ---- The run -------------------------------------------------------------------------------------

const materialized = await materializedColumns();
console.log(materialized.size ? `materialized properties: ${[...materialized].map(([key, name]) => `${key} (${name})`).join(', ')}` : 'no materialized property columns');
const [hundredth] = await clickhouse.query<{ ts: string }>(sql`SELECT toString(timestamp) AS ts FROM events WHERE team_id = ${team} ORDER BY timestamp DESC LIMIT 1 OFFSET 99`);
const newest100 = `toDateTime('${hundredth?.ts ?? '1970-01-01 00:00:00'}', 'UTC')`;
const floorOf = (floor: Floor) => floorSql(floor, team, materialized, newest100);

const endpointMs: number[][] = TIMED.map(() => []);
const floorMs: number[][] = TIMED.map(() => []);
const floorRows: number[] = TIMED.map(() => 0);
const failures = new Map<string, string>();
const dashboardSamples: number[] = [];
const tileFloorMs: number[][] = TILE_FLOORS.map(() => []);
console.log(`warming up, then ${rounds} rounds of ${TIMED.length} requests and their floors, and the dashboard of ${TILE_FLOORS.length} tiles`);
for (let round = -1; round < rounds; round++) {
  for (const [i, timed] of TIMED.entries()) {
    const endpointTurn = async () => {
      // A query refused at this size (over its memory or time limit) is a finding, not the end of the run: it counts as endless.
      const ms = await timed.endpoint().catch((error: unknown) => {
        failures.set(timed.name, error instanceof Error ? error.message : String(error));
        return Number.POSITIVE_INFINITY;
      });
      if (round >= 0) endpointMs[i]!.push(ms);
    };
    const floorTurn = async () => {
      const { ms, readRows } = await viaClickHouse(floorOf(timed.floor));
      floorRows[i] = readRows;
      if (round >= 0) floorMs[i]!.push(ms);
    };
    // Round -1 is the warm-up; the order then swaps every round, so drift falls on both alike.
    if (round % 2 === 0) await floorTurn().then(endpointTurn);
    else await endpointTurn().then(floorTurn);
  }
  const ms = await dashboardMs();
  if (round >= 0) dashboardSamples.push(ms);
  for (const [t, floor] of TILE_FLOORS.entries()) {
    const { ms: tileMs } = await viaClickHouse(floorOf(floor));
    if (round >= 0) tileFloorMs[t]!.push(tileMs);
  }
  if (round >= 0) process.stdout.write(`\rround ${round + 1} of ${rounds}`);
}
process.stdout.write('\n');

const endpointMedian = endpointMs.map(median);
const ratios = TIMED.map((_, i) => endpointMedian[i]! / median(floorMs[i]!));
table(
  TIMED.map((timed, i) => ({
    query: timed.name,
    'endpoint ms': endpointMedian[i]!,
    'floor ms': median(floorMs[i]!),
    'endpoint/floor': ratios[i]!,
    'floor rows read': floorRows[i]!,
  })),
);
for (const [name, message] of failures) console.log(`FAILED ${name}: ${message.slice(0, 300)}`);
const dashboardMedian = median(dashboardSamples);
const tileFloors = tileFloorMs.map(median);
const slowestTileFloor = Math.max(...tileFloors);
// Each tile's query once more, alone, so the dashboard's time can be told apart by tile.
const tiles: Record<string, string | number>[] = [];
for (const [t, tile] of template.tiles.entries()) {
  const source = (tile.query as { source: Record<string, unknown> }).source;
  const ms = await query({ query: source })().catch(() => Number.POSITIVE_INFINITY);
  tiles.push({ tile: tile.name, 'alone ms': ms, 'floor ms': tileFloors[t]!, 'alone/floor': ms / tileFloors[t]! });
}
table(tiles);
console.log(`dashboard of ${template.tiles.length} tiles (refresh=force_blocking): ${dashboardMedian.toFixed(1)} ms, ${(dashboardMedian / slowestTileFloor).toFixed(1)}x its slowest tile's floor (${slowestTileFloor.toFixed(1)} ms; the aim: under 10x)`);
console.log(`project ${team}, ${total.toLocaleString('en')} events, ${rounds} rounds, medians; floors read ${materialized.size ? 'materialized columns where the query reads those properties' : 'properties whole (no mat_* columns)'}`);

await call('PATCH', `/dashboards/${String(dashboard.id)}/`, { deleted: true });
await clickhouse.close();
const load = project.loadSeconds === undefined ? 'NaN' : project.loadSeconds.toFixed(1);
console.log(
  `RESULT events=${total} worst_floor_ratio=${Math.max(...ratios).toFixed(2)} p50_ms=${median(endpointMedian).toFixed(1)} dashboard_ms=${dashboardMedian.toFixed(1)} load_s=${load}`,
);
