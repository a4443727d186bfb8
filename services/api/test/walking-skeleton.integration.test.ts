import { createPool, createTestTenant, testConfig, waitFor, type TestTenant } from '@tributary/test-support';

/**
 * The foundation's end-to-end path on the running system (`make up`): an event posted to the
 * front door's /capture/ goes through Kafka and ingest into ClickHouse, and comes back from the
 * management API's events list with the spec's stored-event fields.
 */
const config = testConfig();
const front = config.publicUrl;
const pool = createPool(config, { max: 2 });
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
});

afterAll(async () => {
  await pool.end();
});

const listEvents = (projectId: number, key: string | null, query = '') =>
  fetch(`${front}/api/environments/${projectId}/events/${query}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

describe('walking skeleton: capture -> Kafka -> ingest -> ClickHouse -> management API', () => {
  it('returns a captured event from the events list with every stored-event field as a string', async () => {
    const distinctId = `user-${Date.now()}`;
    const timestamp = '2026-03-04T05:06:07.890Z';
    const capture = await fetch(`${front}/capture/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: tenant.project.api_token, event: 'walking skeleton', distinct_id: distinctId, properties: { plan: 'pro' }, timestamp }),
    });
    expect(capture.status).toBe(200);
    expect(await capture.json()).toEqual({ status: 1 });

    const body = await waitFor(
      async () => {
        const response = await listEvents(tenant.project.id, tenant.personalApiKey);
        const json = (await response.json()) as { next: string | null; results: Record<string, unknown>[] };
        return json.results.length > 0 ? json : undefined;
      },
      { what: 'the captured event to be listed' },
    );
    expect(body.next).toBeNull();
    const [event] = body.results;
    expect(Object.keys(event!).sort()).toEqual(['distinct_id', 'elements', 'elements_chain', 'event', 'id', 'person', 'properties', 'timestamp']);
    for (const value of Object.values(event!)) expect(typeof value).toBe('string');
    expect(event).toMatchObject({ event: 'walking skeleton', distinct_id: distinctId, timestamp });
    expect(JSON.parse(event!.properties as string)).toMatchObject({ plan: 'pro' });
  });

  it('answers a missing key with a JSON 401', async () => {
    const response = await listEvents(tenant.project.id, null);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ type: 'authentication_error', code: 'not_authenticated' });
  });

  it('answers an unknown personal key with a JSON 401', async () => {
    const response = await listEvents(tenant.project.id, 'phx_not_a_real_key');
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ type: 'authentication_error', detail: expect.stringMatching(/invalid/) });
  });

  it('answers a project API key on the management API with a 401 saying which key is expected', async () => {
    const response = await listEvents(tenant.project.id, tenant.project.api_token);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/personal API key/);
  });

  it('answers a capture with an unknown project key with a JSON 401', async () => {
    const response = await fetch(`${front}/capture/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: 'phc_unknown', event: 'x', distinct_id: 'y' }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ type: 'authentication_error' });
  });
});
