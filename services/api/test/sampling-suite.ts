import { randomInt } from 'node:crypto';
import { Sql, createClickHouse, type ClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser } from '@tributary/hogql';
import { testConfig } from '@tributary/test-support';
import type { QueryRequest, QueryService } from '../src/query/query-service.js';
import { TEST_QUERY_LIMITS, uncachedQueryService } from './uncached-query-service.js';

/**
 * `samplingFactor` on the insight kinds, through the query service, on a fixture big enough for a
 * sample to say something: PERSONS persons, each with an anonymous distinct id (three pageviews,
 * ten minutes apart) and, for two in three, an identified one (a signup, then two pageviews), both
 * mapped to the person. Another project holds the same distinct ids with marker properties, so a
 * missing guard changes counts and shows its marker.
 */
const PERSONS = 10_000;
const MARKER = 'other-team-secret';
/** The persons with an identified distinct id: every one but each third. */
const IDENTIFIED = PERSONS - Math.ceil(PERSONS / 3);

/** The person's number leads: 18.16's exact unique count hashes a UUID by its first half (`exact-counts-suite.ts`). */
const personUuid = (team: number, n: string) => `toUUID(concat(substring(hex(toUInt64(${n}) + 0x100000000), 3), '-0000-4000-8000-', substring(hex(toUInt64(${team}) + 0x1000000000000), 3)))`;

async function insertProject(clickhouse: ClickHouse, team: number, marker: string, base: number): Promise<void> {
  const rows = `(SELECT number % ${PERSONS} AS n, intDiv(number, ${PERSONS}) AS k FROM numbers(${PERSONS * 6}))`;
  await clickhouse.command(
    Sql.trusted(`INSERT INTO events (uuid, event, properties, timestamp, team_id, distinct_id, person_id, inserted_at)
      SELECT generateUUIDv4(), if(k = 3, 'signup', '$pageview'), concat('{"amount":', toString(n % 10), ',"$current_url":"https://example.com/', toString(k), '","marker":"${marker}"}'),
        toDateTime(${base} - (n % 7) * 86400 + k * 600), ${team}, concat(if(k < 3, 'anon-', 'user-'), toString(n)), ${personUuid(team, 'n')}, now()
      FROM ${rows} WHERE k < 3 OR n % 3 != 0`),
  );
  await clickhouse.command(Sql.trusted(`INSERT INTO person (id, created_at, team_id, properties, is_identified, is_deleted, version) SELECT ${personUuid(team, 'number')}, toDateTime(${base - 30 * 86_400}), ${team}, '{"marker":"${marker}"}', 1, 0, 1 FROM numbers(${PERSONS})`));
  await clickhouse.command(
    Sql.trusted(`INSERT INTO person_distinct_id (team_id, distinct_id, person_id, is_deleted, version)
      SELECT ${team}, concat(if(k = 0, 'anon-', 'user-'), toString(n)), ${personUuid(team, 'n')}, 0, 1
      FROM (SELECT number % ${PERSONS} AS n, intDiv(number, ${PERSONS}) AS k FROM numbers(${PERSONS * 2})) WHERE k = 0 OR n % 3 != 0`),
  );
}

const dateRange = { date_from: '-14d' };
const pageviews = { kind: 'EventsNode', event: '$pageview' };
const signups = { kind: 'EventsNode', event: 'signup' };
const funnel = (samplingFactor?: number) => ({ kind: 'FunnelsQuery', series: [pageviews, signups], dateRange, ...(samplingFactor !== undefined && { samplingFactor }) }) as unknown as QueryRequest;
const trend = (series: object[], samplingFactor?: number, display?: string) =>
  ({ kind: 'TrendsQuery', series, dateRange, ...(display && { trendsFilter: { display } }), ...(samplingFactor !== undefined && { samplingFactor }) }) as unknown as QueryRequest;

/** One request of each insight kind. */
const KINDS: [kind: string, request: QueryRequest][] = [
  ['TrendsQuery', trend([pageviews, { ...pageviews, math: 'dau' }, { ...pageviews, math: 'sum', math_property: 'amount' }])],
  ['FunnelsQuery', funnel()],
  ['RetentionQuery', { kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' }, totalIntervals: 7, period: 'Day' }, dateRange } as unknown as QueryRequest],
  ['StickinessQuery', { kind: 'StickinessQuery', series: [pageviews], dateRange } as unknown as QueryRequest],
  ['LifecycleQuery', { kind: 'LifecycleQuery', series: [pageviews], dateRange } as unknown as QueryRequest],
  ['PathsQuery', { kind: 'PathsQuery', dateRange } as unknown as QueryRequest],
];

/** What an answer counts, all told: its counts, values and data points, by size. */
function magnitude(value: unknown, key = ''): number {
  if (typeof value === 'number') return ['count', 'value', 'aggregated_value', 'data'].includes(key) ? Math.abs(value) : 0;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + magnitude(item, key), 0);
  if (value && typeof value === 'object') return Object.entries(value).reduce((sum, [k, v]) => sum + magnitude(v, k), 0);
  return 0;
}

interface Answer {
  results: any[];
  samplingRate?: { numerator: number; denominator: number };
  hogql: string;
}

export function describeSampling(engine: 'server' | 'chdb'): void {
  const team = 700_000_000 + randomInt(90_000_000);
  const otherTeam = team + 1 + randomInt(1_000_000);
  let clickhouse: ClickHouse;
  let service: QueryService;
  const project = { id: team, timezone: 'UTC' };
  const ask = async (request: QueryRequest) => (await service.run(project, request, new AbortController().signal)) as Answer;
  const hogql = async (query: string) => (await ask({ kind: 'HogQLQuery', query })).results;

  beforeAll(async () => {
    await loadHogQLParser();
    clickhouse = engine === 'chdb' ? await (await import('@tributary/test-support/chdb')).createChdbClickHouse() : createClickHouse(testConfig());
    const base = Math.floor(Date.now() / 3_600_000) * 3600 - 86_400;
    await insertProject(clickhouse, team, 'ours', base);
    await insertProject(clickhouse, otherTeam, MARKER, base);
    const limits = { ...TEST_QUERY_LIMITS, queryMaxExecutionTimeS: 120, queryMaxMemoryBytes: 4_000_000_000 };
    service = uncachedQueryService(clickhouse, { limits, materializedColumns: async () => ({ properties: new Map(), person_properties: new Map() }) });
  }, 300_000);
  afterAll(() => clickhouse.close());

  describe('samplingFactor 1 reads every event: the answer is the unsampled one exactly, unmarked', () => {
    it.each(KINDS)('%s', async (_kind, request) => {
      const whole = await ask(request);
      const one = await ask({ ...request, samplingFactor: 1 } as QueryRequest);
      expect(one.results).toEqual(whole.results);
      expect(one.samplingRate).toBeUndefined();
      expect(one.hogql).toBe(whole.hogql);
      expect(JSON.stringify(one)).not.toContain(MARKER);
    });
  });

  describe('a sampled answer is marked, holds only the project, and its counts are scaled to the whole', () => {
    it.each(KINDS)('%s', async (_kind, request) => {
      const whole = await ask(request);
      const sampled = await ask({ ...request, samplingFactor: 0.5 } as QueryRequest);
      expect(sampled.samplingRate).toEqual({ numerator: 0.5, denominator: 1 });
      // The HogQL it answers with is the query that ran, its reads of events sampled.
      expect(whole.hogql).not.toContain('SAMPLE 0.5');
      expect(sampled.hogql).toContain('FROM events SAMPLE 0.5');
      expect(JSON.stringify(sampled)).not.toContain(MARKER);
      expect(magnitude(whole.results)).toBeGreaterThan(1000);
      expect(Math.abs(magnitude(sampled.results) / magnitude(whole.results) - 1)).toBeLessThan(0.1);
    });

    it("a sampled trend's totals are close to the whole's: counts, persons and sums scaled, averages not", async () => {
      const series = [pageviews, { ...pageviews, math: 'dau' }, { ...pageviews, math: 'sum', math_property: 'amount' }, { ...pageviews, math: 'avg', math_property: 'amount' }];
      const whole = await ask(trend(series, undefined, 'BoldNumber'));
      const sampled = await ask(trend(series, 0.1, 'BoldNumber'));
      const totals = (answer: Answer) => answer.results.map((r) => r.aggregated_value as number);
      // Persons are the sampled unit: 3 pageviews each for the whole project, 5 for two in three.
      expect(totals(whole)).toEqual([PERSONS * 3 + IDENTIFIED * 2, PERSONS, expect.any(Number), expect.any(Number)]);
      totals(sampled).forEach((value, i) => expect(Math.abs(value / totals(whole)[i]! - 1)).toBeLessThan(0.15));
    });

    it("a funnel's conversion stays as measured: persons are in the sample with all their steps", async () => {
      const conversion = (answer: Answer) => answer.results[1].count / answer.results[0].count;
      const whole = await ask(funnel());
      const sampled = await ask(funnel(0.1));
      expect(whole.results.map((s: { count: number }) => s.count)).toEqual([PERSONS, IDENTIFIED]);
      expect(Math.abs(sampled.results[0].count / PERSONS - 1)).toBeLessThan(0.15);
      expect(Math.abs(conversion(sampled) - conversion(whole))).toBeLessThan(0.05);
    });
  });

  describe('sampling is consistent per person', () => {
    it("a person's events are all in the sample or all out", async () => {
      const all = new Map((await hogql('SELECT poe.id, count() FROM events GROUP BY poe.id LIMIT 50000')).map(([id, n]) => [id, Number(n)]));
      const sampled = await hogql('SELECT poe.id, count() FROM events SAMPLE 1/4 GROUP BY poe.id LIMIT 50000');
      expect(all.size).toBe(PERSONS);
      expect(sampled.length).toBeGreaterThan(PERSONS * 0.2);
      expect(sampled.length).toBeLessThan(PERSONS * 0.3);
      for (const [id, n] of sampled) expect([id, Number(n)]).toEqual([id, all.get(id)]);
    });

    it('the same persons are read by every query and kind at one factor, and the halves of the range split them', async () => {
      const [[signed]] = await hogql("SELECT count(DISTINCT poe.id) FROM events SAMPLE 1/4 WHERE event = 'signup'");
      const [[viewed]] = await hogql("SELECT count(DISTINCT poe.id) FROM events SAMPLE 1/4 WHERE event = '$pageview'");
      const dau = await ask(trend([{ ...signups, math: 'dau' }], 0.25, 'BoldNumber'));
      const steps = await ask(funnel(0.25));
      expect(dau.results[0].aggregated_value).toBe(Number(signed) * 4);
      expect(steps.results.map((s: { count: number }) => s.count)).toEqual([Number(viewed) * 4, Number(signed) * 4]);
      const [[first]] = await hogql('SELECT count() FROM events SAMPLE 1/2');
      const [[second]] = await hogql('SELECT count() FROM events SAMPLE 1/2 OFFSET 1/2');
      const [[total]] = await hogql('SELECT count() FROM events');
      expect(Number(first) + Number(second)).toBe(Number(total));
    });
  });
}
