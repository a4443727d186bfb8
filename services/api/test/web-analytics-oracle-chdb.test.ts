import { randomInt } from 'node:crypto';
import { useChdbOracle } from './uncached-query-service.js';
import { EXPECTED_CHANNELS, LEAK, WEB_CASES, buildWebFixture } from './insights-oracle/web-cases.js';
import { referenceWebOverview, referenceWebStats } from './insights-oracle/web-reference.js';

/**
 * The web analytics oracle (`insights-oracle/web-cases.ts`) on a current ClickHouse (chdb's
 * in-process 26.x): the statements the query service prints must give the reference's numbers, as
 * they do on 18.16 (`web-analytics-oracle.integration.test.ts`).
 */
const TEAM = 900_000_000 + randomInt(90_000_000);
const fixture = buildWebFixture();
const oracle = useChdbOracle(TEAM, fixture, buildWebFixture({ other: true }));
const ask = async (request: object) => (await oracle.ask(request)) as { results: unknown[]; hasMore?: boolean };

describe('the web analytics kinds agree with the reference on ClickHouse 26', () => {
  it.each(WEB_CASES)('%s', async (_name, request) => {
    const answer = await ask(request);
    if (request.kind === 'WebOverviewQuery') expect(answer.results).toEqual(referenceWebOverview(fixture.world, request));
    else expect({ results: answer.results, hasMore: answer.hasMore }).toEqual(referenceWebStats(fixture.world, request));
    expect(JSON.stringify(answer.results)).not.toMatch(LEAK);
  });

  it('the cases have numbers to compare: every table has rows, every overview but the empty range has sessions', () => {
    for (const [name, request] of WEB_CASES) {
      const some = request.kind === 'WebOverviewQuery' ? (referenceWebOverview(fixture.world, request)[2] as { value: number }).value > 0 : referenceWebStats(fixture.world, request).results.length > 0;
      expect([name, some]).toEqual([name, !name.includes('without sessions')]);
    }
  });

  it('finds the channels written out by hand', async () => {
    const answer = await ask({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialChannelType', dateRange: { date_from: '2024-05-08', date_to: '2024-05-14' } });
    expect((answer.results as string[][]).map((row) => row[0]).sort()).toEqual(EXPECTED_CHANNELS);
  });
});
