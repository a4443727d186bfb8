import { createTestTenant, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';
import { buildFixture, type Fixture } from './insights-oracle/fixture.js';
import { CASES, NY, TABLE, ZONED, expected, insertFixture, observed, type Zone } from './insights-oracle/cases.js';

/**
 * Issue 45's correctness oracle: every insight kind, asked of the real endpoint on the fixture
 * project, must give exactly the numbers the plain-TypeScript reference computes from the raw rows.
 * The same questions are asked of a project in America/New_York, whose fixture has its edges at
 * local midnight; a second project's rows under the same distinct ids must never count. The
 * questions are `insights-oracle/cases.ts`; `insights-oracle-chdb.test.ts` asks them of ClickHouse 26.
 */

let api: ApiHarness;
const projects = new Map<Zone, { tenant: TestTenant; fixture: Fixture }>();

const setup = useApi();
beforeAll(async () => {
  ({ api } = setup);
  const ny = await createTestTenant(api.pool, api.config);
  await api.pool.query('UPDATE projects SET timezone = $1 WHERE id = $2', [NY, ny.project.id]);
  const other = await createTestTenant(api.pool, api.config);
  projects.set('UTC', { tenant: setup.tenant, fixture: buildFixture('UTC') });
  projects.set(NY, { tenant: ny, fixture: buildFixture(NY) });
  for (const { tenant, fixture } of projects.values()) await insertFixture(api.clickhouse, tenant.project.id, fixture);
  await insertFixture(api.clickhouse, other.project.id, buildFixture('UTC', { other: true }));
  await replicasHold(api.clickhouse, api.config, [...[...projects.values()].map(({ tenant }) => tenant.project.id), other.project.id]);
});

describe('every insight kind agrees with the reference computed from the raw rows', () => {
  it('covers at least 50 cases', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(50);
    expect([...ZONED].every((name) => CASES.some(([n]) => n === name))).toBe(true);
  });

  it.each(TABLE)('%s (%s)', async (_name, zone, request) => {
    const { tenant, fixture } = projects.get(zone)!;
    const { status, body } = await api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: request });
    expect({ status, error: status === 200 ? undefined : body }).toEqual({ status: 200 });
    expect(observed(request, body.results)).toEqual(expected(fixture.world, request));
  });
});
