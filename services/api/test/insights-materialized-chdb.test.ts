import { randomInt } from 'node:crypto';
import { materializeProperty, readMaterializedColumns, type MaterializedColumns } from '@tributary/clickhouse';
import { loadHogQLParser, type PropertyRead } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import type { QueryService } from '../src/query/query-service.js';
import { uncachedQueryService } from './uncached-query-service.js';
import { buildFixture } from './insights-oracle/fixture.js';
import { TABLE, expected, insertFixture, observed } from './insights-oracle/cases.js';

/**
 * Every insight of the oracle (`insights-oracle/cases.ts`: trends, funnels, retention, lifecycle,
 * stickiness, with event and person property filters and breakdowns) gives the reference's numbers
 * with every property it reads materialized, on a current ClickHouse (chdb's 26.x), as it does from
 * the JSON (`insights-oracle-chdb.test.ts`). The properties to materialize are the ones the query
 * service counted as read when it answered the same questions before.
 */
const TEAM = 800_000_000 + randomInt(90_000_000);
const fixture = buildFixture('UTC');
const utcCases = TABLE.filter(([, zone]) => zone === 'UTC');

let clickhouse: ChdbClickHouse;
let service: QueryService;
let materialized: MaterializedColumns;
const reads = new Map<string, PropertyRead>();

beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
  await insertFixture(clickhouse, TEAM, fixture);
  const propertyReads = { record: (read: readonly PropertyRead[]) => read.forEach((r) => reads.set(`${r.column}\0${r.key}`, r)) };
  const counting = uncachedQueryService(clickhouse, { propertyReads, materializedColumns: async () => ({ properties: new Map(), person_properties: new Map() }) });
  for (const [, zone, request] of utcCases) await counting.run({ id: TEAM, timezone: zone }, request, new AbortController().signal);
  for (const { column, key } of reads.values()) await materializeProperty(clickhouse, column, key, { topology: { cluster: null, database: 'tributary' }, fill: 'materialize', maxColumns: 100, mutationTimeoutMs: 120_000, pollMs: 50 });
  materialized = await readMaterializedColumns(clickhouse);
  service = uncachedQueryService(clickhouse, { materializedColumns: async () => materialized });
}, 600_000);
afterAll(() => clickhouse.close());

test('the query service counted the event and person properties the insights read, and each has its column', () => {
  expect(materialized.properties.has('$browser')).toBe(true);
  expect(materialized.person_properties.has('country')).toBe(true);
  expect(materialized.properties.size + materialized.person_properties.size).toBe(reads.size);
});

describe('every insight gives the same numbers with its properties read from their columns', () => {
  it.each(utcCases)('%s (%s)', async (_name, zone, request) => {
    const answer = (await service.run({ id: TEAM, timezone: zone }, request, new AbortController().signal)) as { results: unknown[] };
    expect(observed(request, answer.results as any[])).toEqual(expected(fixture.world, request));
  });
});
