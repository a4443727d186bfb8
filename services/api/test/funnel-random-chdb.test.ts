import { randomInt } from 'node:crypto';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { QueryService } from '../src/query/query-service.js';
import type { InsightCache } from '../src/query/insight-cache.js';
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
  const cache = { answer: (_project: unknown, _request: unknown, _mode: unknown, compute: () => Promise<object>) => compute() } as unknown as InsightCache;
  const none = async () => [];
  service = new QueryService({
    clickhouse,
    cache,
    limits: { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 },
    cohorts: { definitions: none, memberDistinctIds: none, versions: none, idsByName: none },
    actions: { definitions: none },
  });
});
afterAll(() => clickhouse.close());

describe('funnels agree with the reference on random people (ClickHouse 26)', () => {
  it.each(CASES)('%s', async (_name, request) => {
    const answer = (await service.run({ id: TEAM, timezone: 'UTC' }, request, new AbortController().signal)) as { results: unknown[] };
    expect(observed(request, answer.results as any[])).toEqual(referenceAnswer(fixture, request));
  });
});
