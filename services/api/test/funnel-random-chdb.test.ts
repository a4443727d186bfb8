import { randomInt } from 'node:crypto';
import { useChdbOracle } from './uncached-query-service.js';
import { observed } from './insights-oracle/cases.js';
import { CASES, hostile, randomFixture, referenceAnswer } from './funnel-random/cases.js';

/** The random-people funnels (`funnel-random/cases.ts`) on ClickHouse 26 (chdb), through the query service without its cache. */
const TEAM = 700_000_000 + randomInt(90_000_000);

const fixture = randomFixture();
const { ask } = useChdbOracle(TEAM, fixture, hostile(fixture));

describe('funnels agree with the reference on random people (ClickHouse 26)', () => {
  it.each(CASES)('%s', async (_name, request) => {
    const answer = (await ask(request)) as { results: unknown[] };
    expect(observed(request, answer.results as any[])).toEqual(referenceAnswer(fixture, request));
  });
});
