import { PROPERTIES_COLUMNS, Sql, materializeProperty, readMaterializedColumns, runStatement, type ClickHouse, type ClickHouseServer, type MaterializedColumns, type PropertiesColumn, type Topology } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, eventRow } from '@tributary/test-support';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { has } from '../src/server-features.js';
import { parseSelect, printQuery, printHogQL, propertyFilterExprs, type SelectQuery } from '../src/index.js';
import { expectCorpusAnswers } from './conformance-cases.js';
import { OTHER_TEAM, TEAM, createHogQLRunner, insertTwoTeamFixture, type HogQLRunner } from './two-team-fixture.js';

/**
 * The same answers before and after properties are materialized, on whichever engine the caller
 * gives (18.16 in its own database, chdb's 26.x): the HogQL corpus's rows on the two-project
 * fixture, and every read of a property whose values are each JSON type and its edge cases, read
 * as a column, grouped by (a breakdown), and filtered on with every operator.
 */

/** A project of its own whose `v` takes every kind of JSON value, in the event's properties and its person's. */
export const EDGE_TEAM = OTHER_TEAM + 1_000_000;

/** Every kind of JSON value `key` takes in an edge project's events' properties and its persons'. */
const edgeValues = (key: string): [distinctId: string, properties: Record<string, unknown>][] => [
  ['text', { [key]: 'Chrome' }],
  ['empty-text', { [key]: '' }],
  ['json-null', { [key]: null }],
  ['missing', { other: 1 }],
  ['number', { [key]: 7 }],
  ['number-text', { [key]: '7' }],
  ['float', { [key]: 1.5 }],
  ['negative', { [key]: -20 }],
  ['true', { [key]: true }],
  ['false', { [key]: false }],
  ['text-true', { [key]: 'true' }],
  ['object', { [key]: { n: 1, s: 'deep' } }],
  ['array', { [key]: [1, 'two'] }],
  ['escapes', { [key]: 'q"u\\o\nte' }],
  ['unicode', { [key]: 'ünï 表 😀' }],
  ['date', { [key]: '2024-01-02T03:04:05Z' }],
  ['nested-first', { x: { [key]: 'nested' }, [key]: 'top' }],
];

const edgeEvents = (team: number, key: string) =>
  edgeValues(key).map(([distinctId, properties], i) =>
    eventRow(team, distinctId, '$pageview', `2024-02-01 00:00:${String(i).padStart(2, '0')}`, properties, { person_properties: JSON.stringify(properties) }),
  );

const edgeQueries = (v: string) => [
  `SELECT distinct_id, properties.${v}, poe.properties.${v} FROM events ORDER BY distinct_id`,
  `SELECT distinct_id, properties['${v}'], properties.${v}.n, properties.${v}.s, poe.properties.${v}.s FROM events ORDER BY distinct_id`,
  // A breakdown, as trends prints one: the value as text, NULL where absent, empty or null.
  `SELECT properties.${v} AS breakdown, count() AS c FROM events GROUP BY breakdown ORDER BY breakdown`,
  `SELECT distinct_id FROM events WHERE properties.${v} = 7 ORDER BY distinct_id`,
  `SELECT distinct_id FROM events WHERE properties.${v} = true ORDER BY distinct_id`,
  `SELECT distinct_id FROM events WHERE properties.${v} IS NULL ORDER BY distinct_id`,
  `SELECT distinct_id, toFloat(properties.${v}) FROM events WHERE toFloat(properties.${v}) > 1 ORDER BY distinct_id`,
  `SELECT distinct_id, visitParamHas(properties, '${v}'), visitParamExtractRaw(properties, '${v}') FROM events ORDER BY distinct_id`,
  `SELECT e.distinct_id, e.properties.${v} FROM events AS e JOIN person_distinct_ids AS d ON e.distinct_id = d.distinct_id ORDER BY e.distinct_id`,
];

const OPERATORS: [operator: string, value: unknown][] = [
  ['exact', 'chrome'], ['exact', 7], ['exact', ['true', '']], ['is_not', 'Chrome'], ['icontains', 'R'], ['not_icontains', 'r'], ['regex', '^[0-9]'], ['not_regex', '^t'],
  ['gt', 5], ['gte', 7], ['lt', 2], ['lte', -20], ['gt', 'b'], ['is_set', null], ['is_not_set', null], ['is_date_before', '2024-06-01'], ['is_date_after', '2020-01-01'],
];

const filters = (key: string): StoredPropertyFilter[] =>
  OPERATORS.flatMap(([operator, value]) => (['event', 'person'] as const).map((type) => ({ key, type, operator, ...(value !== null && { value }) }) as StoredPropertyFilter));

/** A property filter over the project's events, as insights build them, as HogQL. */
function filterQuery(filter: StoredPropertyFilter): SelectQuery {
  const [where] = propertyFilterExprs([filter], { now: new Date('2024-03-01T00:00:00Z'), cohorts: new Map() });
  return { node: 'SelectQuery', select: [{ node: 'Field', chain: ['distinct_id'] }], select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } }, where: where!, order_by: [{ node: 'OrderExpr', expr: { node: 'Field', chain: ['distinct_id'] }, order: 'ASC' }] };
}

/** The edge project's queries of `key`, each by its HogQL text. */
const edgeCases = async (key: string) => [...(await Promise.all(edgeQueries(key).map((text) => parseSelect(text)))), ...filters(key).map(filterQuery)].map((query) => [printHogQL(query), query as SelectQuery] as const);

const fillOf = (server: ClickHouseServer) => (has(server, 'materializeColumn') ? 'materialize' : 'update');

export interface MaterializedEngine {
  clickhouse: ClickHouse;
  server: ClickHouseServer;
  topology: Topology;
}

/** Every property key the fixtures' queries read, each materialized from the event's JSON; `v` from the person's too. */
const MATERIALIZED: [PropertiesColumn, string][] = [
  ...['$browser', '$current_url', 'amount', 'paid', 'a', 'tags', '$session_id', 'plan', 'v', 'x'].map((key): [PropertiesColumn, string] => ['properties', key]),
  ['person_properties', 'v'],
  ['person_properties', 'plan'],
];

/** A query printed for a project (reading `columns` where given) and its rows on the engine. */
async function runPrinted(context: MaterializedEngine, query: SelectQuery, teamId: number, columns?: MaterializedColumns): Promise<{ sql: string; rows: unknown[][] }> {
  const printed = printQuery(query, { teamId, server: context.server, ...(columns && { materialized: columns }) });
  const { data } = await context.clickhouse.queryCompact(Sql.trusted(printed.clickhouse), { settings: { output_format_json_quote_64bit_integers: 0 } });
  return { sql: printed.clickhouse, rows: data };
}

export function describeMaterializedAnswers(engine: () => Promise<MaterializedEngine>): void {
  let context: MaterializedEngine;
  let materialized: MaterializedColumns;
  const answers = new Map<string, unknown[][]>();

  const run = (query: SelectQuery, teamId: number, columns?: MaterializedColumns) => runPrinted(context, query, teamId, columns);
  beforeAll(async () => {
    context = await engine();
    await insertTwoTeamFixture(context.clickhouse);
    await context.clickhouse.insert('events', EVENT_ROW_COLUMNS, edgeEvents(EDGE_TEAM, 'v'));
    for (const [text, query] of await edgeCases('v')) answers.set(text, (await run(query, EDGE_TEAM)).rows);
    const fill = fillOf(context.server);
    for (const [column, key] of MATERIALIZED) await materializeProperty(context.clickhouse, column, key, { topology: context.topology, fill, maxColumns: 100, mutationTimeoutMs: 120_000, pollMs: 100 });
    materialized = await readMaterializedColumns(context.clickhouse);
  }, 300_000);

  it('every property asked for has its column, found in system.columns', () => {
    expect([...materialized.properties.keys()].sort()).toEqual(MATERIALIZED.filter(([c]) => c === 'properties').map(([, k]) => k).sort());
    expect([...materialized.person_properties.keys()].sort()).toEqual(['plan', 'v']);
  });

  it('the rows stored before a column was added have it written in their parts, not computed on read', async () => {
    const names = [...materialized.properties.values(), ...materialized.person_properties.values()];
    const [row] = await context.clickhouse.query<{ parts: string; filled: string }>(
      Sql.trusted(
        `SELECT (SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = '${context.topology.cluster ? 'sharded_events' : 'events'}' AND active) AS parts, (SELECT count() FROM system.parts_columns WHERE database = currentDatabase() AND table = '${context.topology.cluster ? 'sharded_events' : 'events'}' AND active AND column IN (${names.map((n) => `'${n}'`).join(', ')})) AS filled`,
      ),
    );
    expect(Number(row!.parts)).toBeGreaterThan(0);
    expect(Number(row!.filled)).toBe(Number(row!.parts) * names.length);
  });

  it('every JSON type and edge case of a property reads, groups and filters the same from its column as from the JSON', async () => {
    for (const [text, query] of await edgeCases('v')) {
      const after = await run(query, EDGE_TEAM, materialized);
      expect(after.sql).not.toMatch(/visitParam\w+\(`\w+`\.`(?:properties|person_properties)`, 'v'\)/);
      expect({ text, rows: after.rows }).toEqual({ text, rows: answers.get(text) });
    }
  });

  describe('the HogQL corpus answers as before, its properties read from their columns', () => {
    let runner: HogQLRunner;
    beforeAll(() => {
      runner = createHogQLRunner(context.clickhouse, context.server, TEAM, materialized);
    });
    it('a property read prints its column', async () => {
      const { sql } = await runner.run('SELECT properties.$browser FROM events');
      expect(sql).toContain(materialized.properties.get('$browser'));
      expect(sql).not.toContain('`properties`');
    });
    expectCorpusAnswers(() => runner);
  });
}

/**
 * One property's edge cases in a table other tests share (the stack's, on every shard of a
 * cluster): `key` is the run's own, so its columns change no other query, and they are dropped
 * afterwards, so runs do not pile columns up against MATERIALIZED_COLUMNS_MAX.
 */
export function describeMaterializedKey(engine: () => Promise<MaterializedEngine>, key: string, team: number): void {
  let context: MaterializedEngine;
  const names: string[] = [];
  const answers = new Map<string, unknown[][]>();
  const run = (query: SelectQuery, columns?: MaterializedColumns) => runPrinted(context, query, team, columns);

  beforeAll(async () => {
    context = await engine();
    await context.clickhouse.insert('events', EVENT_ROW_COLUMNS, edgeEvents(team, key));
    for (const [text, query] of await edgeCases(key)) answers.set(text, (await run(query)).rows);
    for (const column of PROPERTIES_COLUMNS) {
      const { name } = await materializeProperty(context.clickhouse, column, key, { topology: context.topology, fill: fillOf(context.server), maxColumns: 1_000, mutationTimeoutMs: 240_000, pollMs: 200 });
      names.push(name);
    }
  }, 600_000);

  afterAll(async () => {
    for (const name of names) await runStatement(context.clickhouse, `ALTER TABLE events DROP COLUMN ${name}`, context.topology);
  });

  it('reads, groups and filters every JSON type of the property the same from its columns as from the JSON', async () => {
    const materialized = await readMaterializedColumns(context.clickhouse);
    expect(materialized.properties.get(key)).toBe(names[0]);
    expect(materialized.person_properties.get(key)).toBe(names[1]);
    const printed: string[] = [];
    for (const [text, query] of await edgeCases(key)) {
      const after = await run(query, materialized);
      printed.push(after.sql);
      expect({ text, rows: after.rows }).toEqual({ text, rows: answers.get(text) });
    }
    for (const name of names) expect(printed.filter((sql) => sql.includes(name)).length).toBeGreaterThan(printed.length / 3);
  });
}
