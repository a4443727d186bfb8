import { startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { createTestTenant, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { useApi } from '../../api/test/api-harness.js';
import { buildDecide } from '../src/decide-app.js';

/**
 * What posthog-js asks decide for by project token alone: the remote config (`surveys` true while
 * a survey runs), the surveys and early access features, and the flags that decide whether a
 * survey is shown and a feature is on, all as defined through the api.
 */
const config = testConfig();
const setup = useApi();
let decideUrl: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const { options } = await buildDecide({ config: testConfig({ decidePort: 0, host: '127.0.0.1' }), logger: createLogger('sdk-products-test', config.logLevel) });
  const runtime = await startServiceRuntime({ ...options, name: 'decide-test', shutdownTimeoutMs: 1_000 }, false);
  decideUrl = `http://127.0.0.1:${runtime.port}`;
  close = () => runtime.shutdown('test finished');
});
afterAll(() => close());

const get = async (path: string) => {
  const response = await fetch(`${decideUrl}${path}`);
  return { status: response.status, body: (await response.json()) as any };
};
const manage = (own: TestTenant, method: string, resource: string, body?: unknown) => setup.api.request(method, `/api/environments/${own.project.id}/${resource}`, own.personalApiKey, body);
/** Whether decide enables the flag for this distinct id, with these person properties. */
async function enabled(own: TestTenant, key: string, personProperties: Record<string, unknown> = {}): Promise<boolean> {
  const response = await fetch(`${decideUrl}/flags/?v=2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: own.project.api_token, distinct_id: uniqueName('visitor'), person_properties: personProperties }),
  });
  const body = (await response.json()) as { flags: Record<string, { enabled: boolean }> };
  return body.flags[key]?.enabled ?? false;
}
const remoteSurveys = async (own: TestTenant) => (await get(`/array/${own.project.api_token}/config`)).body.surveys;
/** `surveys` of the config members `/flags?config=true` adds, which posthog-js reads instead of the remote config. */
async function flagsConfigSurveys(own: TestTenant): Promise<unknown> {
  const response = await fetch(`${decideUrl}/flags/?v=2&config=true`, { method: 'POST', body: JSON.stringify({ token: own.project.api_token, distinct_id: 'visitor' }) });
  return ((await response.json()) as { surveys?: unknown }).surveys;
}

describe('surveys for posthog-js', () => {
  it('turns surveys on in the remote config while a survey runs, and off before and after', async () => {
    const own = await createTestTenant(setup.api.pool, setup.api.config);
    expect(await remoteSurveys(own)).toBe(false);
    const created = await manage(own, 'POST', 'surveys/', { name: 'Draft', type: 'popover', questions: [{ type: 'open', question: 'Hi?' }] });
    expect(await remoteSurveys(own)).toBe(false);
    await manage(own, 'PATCH', `surveys/${created.body.id}/`, { start_date: new Date().toISOString() });
    expect(await remoteSurveys(own)).toBe(true);
    const script = await fetch(`${decideUrl}/array/${own.project.api_token}/config.js`);
    expect(await script.text()).toContain('"surveys":true');
    await manage(own, 'PATCH', `surveys/${created.body.id}/`, { end_date: new Date().toISOString() });
    expect(await remoteSurveys(own)).toBe(false);
  });

  it('answers surveys true in /flags?config=true while a survey runs, as the remote config does', async () => {
    const own = await createTestTenant(setup.api.pool, setup.api.config);
    expect(await flagsConfigSurveys(own)).toBe(false);
    const created = await manage(own, 'POST', 'surveys/', { name: 'Now', type: 'popover', questions: [{ type: 'open', question: 'Hi?' }], start_date: new Date().toISOString() });
    expect(await flagsConfigSurveys(own)).toBe(true);
    await manage(own, 'PATCH', `surveys/${created.body.id}/`, { end_date: new Date().toISOString() });
    expect(await flagsConfigSurveys(own)).toBe(false);
  });

  it("lists the project's surveys as PostHog's /api/surveys/ does, with the flag keys posthog-js checks and without the description", async () => {
    const own = await createTestTenant(setup.api.pool, setup.api.config);
    const linked = await manage(own, 'POST', 'feature_flags/', { key: 'new-checkout' });
    const targeting = { groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['paid'] }], rollout_percentage: 100 }] };
    const created = await manage(own, 'POST', 'surveys/', {
      name: 'Checkout feedback',
      description: 'internal: ask finance',
      type: 'popover',
      questions: [{ type: 'rating', question: 'How was checkout?', scale: 5 }],
      conditions: { url: '/checkout', urlMatchType: 'icontains' },
      appearance: { position: 'right' },
      linked_flag_id: linked.body.id,
      targeting_flag_filters: targeting,
      start_date: '2024-05-01T10:00:00Z',
    });
    const archived = await manage(own, 'POST', 'surveys/', { name: 'Old', type: 'api', archived: true });
    expect(archived.status).toBe(201);

    const { status, body } = await get(`/api/surveys/?token=${own.project.api_token}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      surveys: [
        {
          id: created.body.id,
          name: 'Checkout feedback',
          type: 'popover',
          linked_flag_key: 'new-checkout',
          targeting_flag_key: created.body.targeting_flag.key,
          internal_targeting_flag_key: created.body.internal_targeting_flag.key,
          questions: created.body.questions,
          conditions: { url: '/checkout', urlMatchType: 'icontains' },
          appearance: { position: 'right' },
          start_date: '2024-05-01T10:00:00.000Z',
          end_date: null,
          current_iteration: null,
          current_iteration_start_date: null,
          schedule: null,
          enable_partial_responses: null,
        },
      ],
      survey_config: null,
    });
    // The display conditions are flags: the targeting flag matches on the person, the internal one leaves out whoever answered or dismissed.
    const { targeting_flag: made, internal_targeting_flag: internal } = created.body;
    expect(await enabled(own, made.key, { plan: 'paid' })).toBe(true);
    expect(await enabled(own, made.key, { plan: 'free' })).toBe(false);
    expect(await enabled(own, internal.key)).toBe(true);
    expect(await enabled(own, internal.key, { [`$survey_responded/${created.body.id}`]: true })).toBe(false);
    expect(await enabled(own, internal.key, { [`$survey_dismissed/${created.body.id}`]: true })).toBe(false);
    // Stopping the survey turns its flags off.
    await manage(own, 'PATCH', `surveys/${created.body.id}/`, { end_date: '2024-06-01T00:00:00Z' });
    await waitFor(async () => !(await enabled(own, internal.key)), { what: 'the stopped survey’s internal flag to be off' });
    expect(await enabled(own, made.key, { plan: 'paid' })).toBe(false);
  });

  it('answers 401 without a project token or with one no project has, and never asks for a personal API key', async () => {
    expect((await get('/api/surveys/')).status).toBe(401);
    expect((await get('/api/surveys/?token=phc_nobody_has_this_token')).status).toBe(401);
    const { tenant } = setup;
    expect((await get(`/api/surveys/?token=${tenant.project.api_token}`)).status).toBe(200);
  });
});

describe('early access features for posthog-js', () => {
  it("lists the project's beta features by default and the stages asked for, as posthog-js's FeaturePreview", async () => {
    const own = await createTestTenant(setup.api.pool, setup.api.config);
    const beta = await manage(own, 'POST', 'early_access_features/', { name: 'Dark mode', description: 'Dim it', stage: 'beta', documentation_url: 'https://docs.example.test/dark' });
    const concept = await manage(own, 'POST', 'early_access_features/', { name: 'Time travel', stage: 'concept' });
    await manage(own, 'POST', 'early_access_features/', { name: 'Old thing', stage: 'archived' });

    const byDefault = await get(`/api/early_access_features/?token=${own.project.api_token}`);
    expect(byDefault.body).toEqual({
      earlyAccessFeatures: [{ id: beta.body.id, name: 'Dark mode', description: 'Dim it', stage: 'beta', documentationUrl: 'https://docs.example.test/dark', flagKey: 'dark-mode' }],
    });
    const asked = await get(`/api/early_access_features/?token=${own.project.api_token}&stage=concept&stage=beta&_=${Date.now()}`);
    expect(asked.body.earlyAccessFeatures.map((f: { id: string }) => f.id)).toEqual([beta.body.id, concept.body.id]);
    expect((await get('/api/early_access_features/?token=phc_nobody_has_this_token')).status).toBe(401);
  });

  it('enables the feature flag for a person who enrolled, through the $feature_enrollment super condition', async () => {
    const own = await createTestTenant(setup.api.pool, setup.api.config);
    await manage(own, 'POST', 'early_access_features/', { name: 'Fast export', stage: 'alpha' });
    expect(await enabled(own, 'fast-export')).toBe(false);
    expect(await enabled(own, 'fast-export', { '$feature_enrollment/fast-export': true })).toBe(true);
    expect(await enabled(own, 'fast-export', { '$feature_enrollment/fast-export': false })).toBe(false);
  });
});
