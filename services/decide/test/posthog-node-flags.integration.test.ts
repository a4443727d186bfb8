import { PostHog } from 'posthog-node';
import { PostHog as PostHogV4 } from 'posthog-node-v4';
import { createPool, createTestTenant, frontDoorApi, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';

/**
 * The real posthog-node SDKs (5.x calls /flags/?v=2 and /flags/definitions, 4.10 calls
 * /decide/?v=3 and /api/feature_flag/local_evaluation) against the running system's front door.
 * Local evaluation runs PostHog's own matching code inside the SDK, so comparing it with what
 * decide answers for the same ids checks that our hash and bucket boundaries are PostHog's.
 */
const config = testConfig();
const front = config.publicUrl;
const pool = createPool(config, { max: 2 });
let tenant: TestTenant;

const flags = [
  { key: 'everyone', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"tier":"gold"}' } } },
  { key: 'partial', filters: { groups: [{ properties: [], rollout_percentage: 37 }] } },
  { key: 'pro-only', filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } },
  {
    key: 'checkout',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 33 }, { key: 'one', rollout_percentage: 33 }, { key: 'two', rollout_percentage: 34 }] },
      payloads: { two: '{"color":"blue"}' },
    },
  },
  { key: 'big-companies', filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'seats', value: 100, operator: 'gte', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] } },
  { key: 'switched-off', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
];

const api = frontDoorApi(front, () => tenant, 'projects');

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  await pool.query('INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, $2, 0)', [tenant.project.id, 'company']);
  for (const flag of flags) await api('POST', '/feature_flags/', { name: flag.key, active: true, ...flag });
  // Decide learns of new definitions through Redis pub/sub; wait until it answers with the last one.
  await waitFor(
    async () => {
      const response = await fetch(`${front}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: tenant.project.api_token, distinct_id: 'probe' }) });
      const body = (await response.json()) as { flags: Record<string, unknown> };
      return 'switched-off' in body.flags;
    },
    { what: 'decide to see the new flags' },
  );
});

afterAll(async () => {
  await pool.end();
});

type Client = PostHog | PostHogV4;
const sdks: [string, (options: Record<string, unknown>) => Client][] = [
  ['posthog-node 5', (options) => new PostHog(tenant.project.api_token, { host: front, flushAt: 1, flushInterval: 0, ...options })],
  ['posthog-node 4.10', (options) => new PostHogV4(tenant.project.api_token, { host: front, flushAt: 1, flushInterval: 0, ...options })],
];

describe.each(sdks)('%s', (_name, make) => {
  let remote: Client;
  let local: Client;

  beforeAll(async () => {
    remote = make({ sendFeatureFlagEvent: false });
    local = make({ personalApiKey: tenant.personalApiKey, featureFlagsPollingInterval: 60_000, sendFeatureFlagEvent: false });
    await local.reloadFeatureFlags();
  });

  afterAll(async () => {
    await remote.shutdown();
    await local.shutdown();
  });

  it('isFeatureEnabled answers rollouts and inactive flags', async () => {
    expect(await remote.isFeatureEnabled('everyone', uniqueName('u'))).toBe(true);
    expect(await remote.isFeatureEnabled('switched-off', uniqueName('u'))).toBe(false);
  });

  it('getFeatureFlag and getFeatureFlagPayload answer variants and payloads', async () => {
    const variants = new Set<unknown>();
    for (let i = 0; i < 30; i++) variants.add(await remote.getFeatureFlag('checkout', `variant-user-${i}`));
    expect([...variants].sort()).toEqual(['control', 'one', 'two']);
    expect(await remote.getFeatureFlagPayload('everyone', 'someone')).toEqual({ tier: 'gold' });
  });

  it('takes person properties from the request, and group properties for group flags', async () => {
    const user = uniqueName('u');
    expect(await remote.isFeatureEnabled('pro-only', user, { personProperties: { plan: 'pro' } })).toBe(true);
    expect(await remote.isFeatureEnabled('pro-only', user, { personProperties: { plan: 'free' } })).toBe(false);
    const company = { groups: { company: 'acme' } };
    expect(await remote.isFeatureEnabled('big-companies', user, { ...company, groupProperties: { company: { seats: '250' } } })).toBe(true);
    expect(await remote.isFeatureEnabled('big-companies', user, { ...company, groupProperties: { company: { seats: '5' } } })).toBe(false);
  });

  it('getAllFlags returns every active flag the user gets', async () => {
    const all = await remote.getAllFlags('all-flags-user', { personProperties: { plan: 'pro' } });
    expect(all).toMatchObject({ everyone: true, 'pro-only': true, 'switched-off': false });
    expect(['control', 'one', 'two']).toContain(all.checkout);
  });

  it('evaluates locally with a personal API key exactly as decide does remotely', async () => {
    for (let i = 0; i < 40; i++) {
      const id = `compare-${i}`;
      for (const key of ['partial', 'checkout']) {
        const locally = await local.getFeatureFlag(key, id, { onlyEvaluateLocally: true });
        expect(locally).toBe(await remote.getFeatureFlag(key, id));
      }
    }
    expect(await local.getFeatureFlag('pro-only', 'x', { personProperties: { plan: 'pro' }, onlyEvaluateLocally: true })).toBe(true);
    expect(await local.getFeatureFlagPayload('checkout', 'compare-0', 'two', { onlyEvaluateLocally: true })).toEqual({ color: 'blue' });
  });
});

describe('person properties stored by ingest', () => {
  it('decide reads the person properties an identify set, without the request sending them', async () => {
    const user = uniqueName('identified');
    const client = new PostHog(tenant.project.api_token, { host: front, flushAt: 1, flushInterval: 0, sendFeatureFlagEvent: false });
    try {
      client.identify({ distinctId: user, properties: { plan: 'pro' } });
      await client.flush();
      await waitFor(async () => (await client.isFeatureEnabled('pro-only', user)) === true, { what: 'the identified person to get pro-only', timeoutMs: 60_000 });
      expect(await client.isFeatureEnabled('pro-only', `${user}-stranger`)).toBe(false);
    } finally {
      await client.shutdown();
    }
  });
});
