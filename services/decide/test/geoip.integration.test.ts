import { createPool, createTestTenant, testConfig, waitFor, type TestTenant } from '@tributary/test-support';

/**
 * Location flags through the running system's front door: decide derives `$geoip_*` person
 * properties from the client's address, which a client may set with X-Forwarded-For (spec rules
 * 2-3); properties sent in the request still win, and `geoip_disable` turns the lookup off.
 */
const config = testConfig();
const front = config.publicUrl;
const pool = createPool(config, { max: 2 });
let tenant: TestTenant;

async function flags(body: Record<string, unknown>, forwardedFor?: string): Promise<Record<string, { enabled: boolean }>> {
  const response = await fetch(`${front}/flags/?v=2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body: JSON.stringify({ token: tenant.project.api_token, distinct_id: 'traveller', ...body }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { flags: Record<string, { enabled: boolean }> }).flags;
}

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  const filters = { groups: [{ properties: [{ key: '$geoip_country_code', value: ['GB'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] };
  const response = await fetch(`${front}/api/projects/${tenant.project.id}/feature_flags/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.personalApiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key: 'uk-only', name: 'uk-only', active: true, filters }),
  });
  expect(response.status).toBe(201);
  await waitFor(async () => 'uk-only' in (await flags({})), { what: 'decide to see the flag' });
});

afterAll(async () => {
  await pool.end();
});

describe('GeoIP in decide', () => {
  it('matches location flags on the address in X-Forwarded-For, and not on a private or foreign one', async () => {
    expect((await flags({}, '81.2.69.142'))['uk-only']!.enabled).toBe(true);
    expect((await flags({}, '8.8.8.8'))['uk-only']!.enabled).toBe(false);
    expect((await flags({}))['uk-only']!.enabled).toBe(false);
  });

  it('lets person_properties in the request override the derived ones, and geoip_disable turn them off', async () => {
    expect((await flags({ person_properties: { $geoip_country_code: 'US' } }, '81.2.69.142'))['uk-only']!.enabled).toBe(false);
    expect((await flags({ person_properties: { $geoip_country_code: 'GB' } }, '8.8.8.8'))['uk-only']!.enabled).toBe(true);
    expect((await flags({ geoip_disable: true }, '81.2.69.142'))['uk-only']!.enabled).toBe(false);
  });
});
