import { randomInt } from 'node:crypto';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { QueryService } from '../src/query/query-service.js';
import type { InsightCache } from '../src/query/insight-cache.js';
import { buildFixture, type Fixture } from './insights-oracle/fixture.js';
import { NY, TABLE, expected, insertFixture, observed, type Zone } from './insights-oracle/cases.js';

/**
 * The insights oracle (`insights-oracle/cases.ts`) on a current ClickHouse (chdb's in-process
 * 26.x): every insight kind's statements, printed for it by the query service as for any server,
 * must give the reference's numbers, as they do on 18.16 (`insights-oracle.integration.test.ts`).
 * The query service runs without its Redis cache here: every answer is computed.
 */
const TEAM = 800_000_000 + randomInt(90_000_000);
const projects: Record<Zone, { id: number; fixture: Fixture }> = {
  UTC: { id: TEAM, fixture: buildFixture('UTC') },
  [NY]: { id: TEAM + 1, fixture: buildFixture(NY) },
};

// The oracle's questions name no cohort, so the store is never asked.
const noCohorts = { definitions: async () => [], memberDistinctIds: async () => [], versions: async () => [] };
let clickhouse: ChdbClickHouse;
let service: QueryService;
beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
  for (const { id, fixture } of Object.values(projects)) await insertFixture(clickhouse, id, fixture);
  await insertFixture(clickhouse, TEAM + 2, buildFixture('UTC', { other: true }));
  // Computes every answer, as the real cache does for a question it has not seen.
  const cache = { answer: (_project: unknown, _request: unknown, _mode: unknown, compute: () => Promise<object>) => compute() } as unknown as InsightCache;
  service = new QueryService({ clickhouse, cache, limits: { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 }, cohorts: noCohorts });
});
afterAll(() => clickhouse.close());

describe('every insight kind agrees with the reference on ClickHouse 26', () => {
  it.each(TABLE)('%s (%s)', async (_name, zone, request) => {
    const { id, fixture } = projects[zone];
    const answer = (await service.run({ id, timezone: zone }, request, new AbortController().signal)) as { results: unknown[] };
    expect(observed(request, answer.results as any[])).toEqual(expected(fixture.world, request));
  });
});
