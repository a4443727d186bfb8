import { createTestTenant, replicasHold } from '@tributary/test-support';
import { useApi } from './api-harness.js';
import { insertFixture, observed } from './insights-oracle/cases.js';
import { CASES, hostile, randomFixture, referenceAnswer } from './funnel-random/cases.js';

/** The random-people funnels (`funnel-random/cases.ts`) through the endpoint on the stack's ClickHouse 18.16. */
const setup = useApi();
const fixture = randomFixture();
beforeAll(async () => {
  const { api, tenant } = setup;
  const other = await createTestTenant(api.pool, api.config);
  await insertFixture(api.clickhouse, tenant.project.id, fixture);
  await insertFixture(api.clickhouse, other.project.id, hostile(fixture));
  await replicasHold(api.clickhouse, api.config, [tenant.project.id, other.project.id]);
});

describe('funnels agree with the reference on random people (ClickHouse 18.16)', () => {
  it.each(CASES)('%s', async (_name, request) => {
    const { api, tenant } = setup;
    const { status, body } = await api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: request });
    expect({ status, error: status === 200 ? undefined : body }).toEqual({ status: 200 });
    expect(observed(request, body.results)).toEqual(referenceAnswer(fixture, request));
  });
});
