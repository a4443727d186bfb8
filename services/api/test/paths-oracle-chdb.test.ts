import { randomInt } from 'node:crypto';
import { useChdbOracle } from './uncached-query-service.js';
import { LEAK, PATHS_CASES, buildPathsFixture, expectedPaths } from './insights-oracle/paths-cases.js';

/**
 * The paths oracle (`insights-oracle/paths-cases.ts`) on a current ClickHouse (chdb's in-process
 * 26.x): the statements the query service prints for it must give the reference's edges, as they
 * do on 18.16 (`paths-oracle.integration.test.ts`).
 */
const TEAM = 900_000_000 + randomInt(90_000_000);
const fixture = buildPathsFixture();
const { ask } = useChdbOracle(TEAM, fixture, buildPathsFixture({ other: true }));

describe('PathsQuery agrees with the reference on ClickHouse 26', () => {
  it.each(PATHS_CASES)('%s', async (_name, request) => {
    const answer = (await ask(request)) as { results: unknown[] };
    const expected = expectedPaths(fixture, request);
    expect(answer.results).toEqual(expected);
    expect(JSON.stringify(answer.results)).not.toMatch(LEAK);
  });

  it('the cases have edges to compare', () => {
    expect(PATHS_CASES.filter(([, request]) => expectedPaths(fixture, request).length > 0)).toHaveLength(PATHS_CASES.length);
  });
});
