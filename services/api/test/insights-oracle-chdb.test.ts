import { randomInt } from 'node:crypto';
import { loadHogQLParser } from '@tributary/hogql';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import type { QueryService } from '../src/query/query-service.js';
import { uncachedQueryService } from './uncached-query-service.js';
import { buildFixture, type Fixture } from './insights-oracle/fixture.js';
import { NY, TABLE, asActions, expected, insertFixture, observed, type OracleAction, type Zone } from './insights-oracle/cases.js';

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
/** Actions kept as the real store keeps them: each in its project, found by id or name only there. */
const stored: (OracleAction & { id: number; team: number })[] = [];
const actions = {
  definitions: async (teamId: number, ids: readonly number[], names: readonly string[] = []) =>
    stored.filter((a) => a.team === teamId && (ids.includes(a.id) || names.includes(a.name))).map(({ id, name, steps }) => ({ id, name, steps })),
};
const storeAction = (team: number) => (action: OracleAction) => {
  stored.push({ ...action, id: stored.length + 1, team });
  return stored.length;
};
let clickhouse: ChdbClickHouse;
let service: QueryService;
beforeAll(async () => {
  await loadHogQLParser();
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
  for (const { id, fixture } of Object.values(projects)) await insertFixture(clickhouse, id, fixture);
  await insertFixture(clickhouse, TEAM + 2, buildFixture('UTC', { other: true }));
  service = uncachedQueryService(clickhouse, { actions });
});
afterAll(() => clickhouse.close());

describe('every insight kind agrees with the reference on ClickHouse 26', () => {
  it.each(TABLE)('%s (%s)', async (_name, zone, request) => {
    const { id, fixture } = projects[zone];
    const answer = (await service.run({ id, timezone: zone }, request, new AbortController().signal)) as { results: unknown[] };
    expect(observed(request, answer.results as any[])).toEqual(expected(fixture.world, request));
  });
});

describe('each question asked with actions instead of events gives the same numbers (ActionsNode, retention {type: actions})', () => {
  it.each(TABLE)('%s (%s)', async (_name, zone, request) => {
    const { id, fixture } = projects[zone];
    const withActions = asActions(request, storeAction(id));
    const answer = (await service.run({ id, timezone: zone }, withActions, new AbortController().signal)) as { results: unknown[] };
    expect(observed(request, answer.results as any[])).toEqual(expected(fixture.world, request));
  });

  it("refuses another project's action, by id, as one the project does not have", async () => {
    const foreign = storeAction(TEAM + 2)({ name: 'Theirs', steps: [{ event: '$pageview' }] });
    const request = { kind: 'TrendsQuery' as const, series: [{ kind: 'ActionsNode' as const, id: foreign }], dateRange: { date_from: '2024-01-01', date_to: '2024-01-31' } };
    await expect(service.run({ id: TEAM, timezone: 'UTC' }, request, new AbortController().signal)).rejects.toMatchObject({ status: 400, detail: expect.stringContaining(`action ${foreign} does not exist in this project`) });
  });
});
