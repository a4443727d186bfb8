import { randomInt } from 'node:crypto';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import type { QueryService } from '../src/query/query-service.js';
import { uncachedQueryService } from './uncached-query-service.js';
import { insertFixture, observed } from './insights-oracle/cases.js';
import { CASES, hostile, randomFixture, referenceAnswer } from './funnel-random/cases.js';

/** The random-people funnels (`funnel-random/cases.ts`) on ClickHouse 26 (chdb), through the query service without its cache. */
const TEAM = 700_000_000 + randomInt(90_000_000);

let clickhouse: ChdbClickHouse;
let service: QueryService;
const fixture = randomFixture();
beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
  await insertFixture(clickhouse, TEAM, fixture);
  await insertFixture(clickhouse, TEAM + 1, hostile(fixture));
  service = uncachedQueryService(clickhouse);
});
afterAll(() => clickhouse.close());

describe('funnels agree with the reference on random people (ClickHouse 26)', () => {
  it.each(CASES)('%s', async (_name, request) => {
    const answer = (await service.run({ id: TEAM, timezone: 'UTC' }, request, new AbortController().signal)) as { results: unknown[] };
    expect(observed(request, answer.results as any[])).toEqual(referenceAnswer(fixture, request));
  });
});
