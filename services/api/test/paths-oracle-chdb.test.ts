import { randomInt } from 'node:crypto';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import type { QueryService } from '../src/query/query-service.js';
import { uncachedQueryService } from './uncached-query-service.js';
import { insertFixture } from './insights-oracle/cases.js';
import { LEAK, PATHS_CASES, buildPathsFixture, expectedPaths } from './insights-oracle/paths-cases.js';

/**
 * The paths oracle (`insights-oracle/paths-cases.ts`) on a current ClickHouse (chdb's in-process
 * 26.x): the statements the query service prints for it must give the reference's edges, as they
 * do on 18.16 (`paths-oracle.integration.test.ts`).
 */
const TEAM = 900_000_000 + randomInt(90_000_000);
const fixture = buildPathsFixture();
let clickhouse: ChdbClickHouse;
let service: QueryService;
beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
  await insertFixture(clickhouse, TEAM, fixture);
  await insertFixture(clickhouse, TEAM + 1, buildPathsFixture({ other: true }));
  service = uncachedQueryService(clickhouse);
});
afterAll(() => clickhouse.close());

describe('PathsQuery agrees with the reference on ClickHouse 26', () => {
  it.each(PATHS_CASES)('%s', async (_name, request) => {
    const answer = (await service.run({ id: TEAM, timezone: 'UTC' }, request, new AbortController().signal)) as { results: unknown[] };
    const expected = expectedPaths(fixture, request);
    expect(answer.results).toEqual(expected);
    expect(JSON.stringify(answer.results)).not.toMatch(LEAK);
  });

  it('the cases have edges to compare', () => {
    expect(PATHS_CASES.filter(([, request]) => expectedPaths(fixture, request).length > 0)).toHaveLength(PATHS_CASES.length);
  });
});
