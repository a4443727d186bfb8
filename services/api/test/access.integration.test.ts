import { ControlPlaneStore, type Project } from '@tributary/control-plane';
import { createKey, createTestTenant, uniqueName, type TestTenant } from '@tributary/test-support';
import { startApi, useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
/** A second project in the tenant's organization, for keys limited to one of them. */
let sibling: Project;

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));
beforeAll(async () => {
  sibling = await new ControlPlaneStore(api.pool, api.config.apiKeyPepper).createProject(tenant.organizationId, uniqueName('sibling'));
});

const ERROR_KEYS = ['attr', 'code', 'detail', 'type'];

describe('personal API keys (PostHog: a key may only read itself; managing keys is a session\'s)', () => {
  it('reads itself by id or @current, with its mask and never its value', async () => {
    const key = await createKey(api.pool, api.config, tenant.user.id, ['personal_api_key:read', 'feature_flag:read'], [tenant.project.id]);
    const current = await api.request('GET', '/api/personal_api_keys/@current/', key);
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ scopes: ['personal_api_key:read', 'feature_flag:read'], scoped_projects: [tenant.project.id], mask_value: `${key.slice(0, 6)}...${key.slice(-4)}` });
    expect(current.text).not.toContain(key);
    expect((await api.request('GET', `/api/personal_api_keys/${current.body.id}/`, key)).body.id).toBe(current.body.id);
  });

  it('cannot list, read, issue or revoke other keys, even unlimited and of the same user; the unlimited key stays usable', async () => {
    const narrow = await createKey(api.pool, api.config, tenant.user.id, ['personal_api_key:write'], [tenant.project.id]);
    const unlimitedId = (await api.request('GET', '/api/personal_api_keys/@current/', tenant.personalApiKey)).body.id;
    for (const key of [narrow, tenant.personalApiKey]) {
      const answers = [
        await api.request('GET', '/api/personal_api_keys/', key),
        await api.request('POST', '/api/personal_api_keys/', key, { label: 'minted', scopes: ['*'] }),
        await api.request('DELETE', `/api/personal_api_keys/${unlimitedId}/`, key),
      ];
      if (key === narrow) answers.push(await api.request('GET', `/api/personal_api_keys/${unlimitedId}/`, key));
      for (const answer of answers) expect(answer.body).toMatchObject({ type: 'permission_denied', code: 'session_required', detail: expect.stringMatching(/tributary keys:/) });
    }
    expect((await api.request('GET', '/api/projects/', tenant.personalApiKey)).status).toBe(200);
    const stored = await api.pool.query('SELECT count(*)::int AS n FROM personal_api_keys WHERE user_id = $1 AND label = $2', [tenant.user.id, 'minted']);
    expect(stored.rows[0].n).toBe(0);
  });

  it('reading itself needs personal_api_key:read, naming it', async () => {
    const key = await createKey(api.pool, api.config, tenant.user.id, ['project:read']);
    const current = await api.request('GET', '/api/personal_api_keys/@current/', key);
    expect(current.status).toBe(403);
    expect(current.body.detail).toMatch(/'personal_api_key:read'/);
  });
});

describe('authentication', () => {
  const path = () => `/api/projects/${tenant.project.id}/feature_flags/`;

  it('answers a missing key with 401 not_authenticated', async () => {
    const { status, body } = await api.request('GET', path(), null);
    expect(status).toBe(401);
    expect(body).toEqual({ type: 'authentication_error', code: 'not_authenticated', detail: expect.stringMatching(/Bearer/), attr: null });
  });

  it('answers an unknown key, or a credential that is not a Bearer token, with 401', async () => {
    const unknown = await api.request('GET', path(), `phx_${'x'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ type: 'authentication_error', code: 'authentication_failed' });
    const response = await fetch(`${api.url}${path()}`, { headers: { authorization: `Basic ${Buffer.from(`user:${tenant.personalApiKey}`).toString('base64')}` } });
    expect(response.status).toBe(401);
  });

  it('answers a project API key with 401 saying a personal API key is expected', async () => {
    const { status, body } = await api.request('GET', path(), tenant.project.api_token);
    expect(status).toBe(401);
    expect(body.type).toBe('authentication_error');
    expect(body.detail).toMatch(/project API key/);
    expect(body.detail).toMatch(/personal API key \(phx_/);
  });
});

describe('project access', () => {
  it('a key limited to some projects gets 403 on the others of the same organization', async () => {
    const limited = await createKey(api.pool, api.config, tenant.user.id, ['*'], [tenant.project.id]);
    expect((await api.request('GET', `/api/projects/${tenant.project.id}/cohorts/`, limited)).status).toBe(200);
    for (const path of [`/api/projects/${sibling.id}/cohorts/`, `/api/environments/${sibling.id}/feature_flags/`, `/api/projects/${sibling.id}/`]) {
      const { status, body } = await api.request('GET', path, limited);
      expect(status).toBe(403);
      expect(body).toMatchObject({ type: 'permission_denied', detail: expect.stringMatching(new RegExp(`project ${sibling.id}`)) });
    }
  });

  it("refuses a project of an organization the key's user is not in", async () => {
    const stranger = await createTestTenant(api.pool, api.config);
    expect((await api.request('GET', `/api/projects/${stranger.project.id}/feature_flags/`, tenant.personalApiKey)).status).toBe(403);
    expect((await api.request('GET', `/api/projects/${stranger.project.id}/`, tenant.personalApiKey)).status).toBe(403);
  });

  it('answers 404 for a project id that does not exist, on every route', async () => {
    for (const path of ['/api/projects/999999999/feature_flags/', '/api/environments/999999999/cohorts/', '/api/projects/999999999/', '/api/projects/not-a-number/']) {
      const { status, body } = await api.request('GET', path, tenant.personalApiKey);
      expect(status).toBe(404);
      expect(body).toMatchObject({ code: 'not_found' });
    }
  });
});

describe('GET /api/projects/', () => {
  it("lists the projects of the user's organizations as {count, next, previous, results}", async () => {
    const { status, body } = await api.request('GET', '/api/projects/', tenant.personalApiKey);
    expect(status).toBe(200);
    expect(body).toMatchObject({ count: 2, next: null, previous: null });
    expect(body.results).toEqual([
      {
        id: tenant.project.id,
        uuid: tenant.project.uuid,
        organization: tenant.organizationId,
        name: tenant.project.name,
        api_token: tenant.project.api_token,
        timezone: 'UTC',
        event_retention_days: null,
        modifiers: {},
        default_modifiers: { personsOnEventsMode: 'disabled' },
        created_at: tenant.project.created_at.toISOString(),
      },
      expect.objectContaining({ id: sibling.id, name: sibling.name }),
    ]);
  });

  it('lists only the projects a limited key may reach', async () => {
    const limited = await createKey(api.pool, api.config, tenant.user.id, ['project:read'], [sibling.id]);
    const { body } = await api.request('GET', '/api/projects/', limited);
    expect(body.count).toBe(1);
    expect(body.results.map((p: { id: number }) => p.id)).toEqual([sibling.id]);
  });

  it('retrieves one project by id', async () => {
    const { status, body } = await api.request('GET', `/api/projects/${sibling.id}/`, tenant.personalApiKey);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: sibling.id, name: sibling.name, organization: tenant.organizationId, api_token: sibling.api_token });
  });

  it('needs project:read, naming it', async () => {
    const key = await createKey(api.pool, api.config, tenant.user.id, ['cohort:read']);
    const { status, body } = await api.request('GET', '/api/projects/', key);
    expect(status).toBe(403);
    expect(body).toMatchObject({ code: 'missing_scope', detail: expect.stringMatching(/'project:read'/) });
  });
});

describe('rate limits', () => {
  let limited: ApiHarness;

  beforeAll(async () => {
    limited = await startApi({ apiRateLimitPerMinute: 2 });
  });

  afterAll(async () => {
    await limited.close();
  });

  it('answers 429 with Retry-After once a key exceeds its requests per minute, without touching other keys', async () => {
    const key = await createKey(api.pool, api.config, tenant.user.id, ['project:read']);
    // Five requests against a limit of two exceed it even if a minute boundary falls between them.
    const responses = [];
    for (let i = 0; i < 5; i += 1) responses.push(await limited.request('GET', '/api/projects/', key));
    const throttled = responses.filter((r) => r.status === 429);
    expect(throttled.length).toBeGreaterThan(0);
    for (const response of throttled) {
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(response.body).toEqual({ type: 'throttled', code: 'throttled', detail: expect.stringMatching(/throttled/), attr: null });
    }
    const other = await createKey(api.pool, api.config, tenant.user.id, ['project:read']);
    expect((await limited.request('GET', '/api/projects/', other)).status).toBe(200);
  });
});

describe('the one error shape', () => {
  it('every management API error is {type, code, detail, attr}', async () => {
    const noScope = await createKey(api.pool, api.config, tenant.user.id, ['project:read']);
    const errors = [
      await api.request('GET', '/api/projects/', null),
      await api.request('GET', '/api/projects/', tenant.project.api_token),
      await api.request('GET', `/api/projects/${tenant.project.id}/cohorts/`, noScope),
      await api.request('GET', '/api/projects/999999999/cohorts/', tenant.personalApiKey),
      await api.request('GET', `/api/projects/${tenant.project.id}/no_such_resource/`, tenant.personalApiKey),
      await api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, '{"key": '),
      await api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, { key: 'a b' }),
    ];
    expect(errors.map((e) => e.status)).toEqual([401, 401, 403, 404, 404, 400, 400]);
    for (const { body, headers } of errors) {
      expect(headers.get('content-type')).toMatch(/application\/json/);
      expect(Object.keys(body).sort()).toEqual(ERROR_KEYS);
      expect(typeof body.detail).toBe('string');
    }
    expect(errors[6]!.body.attr).toBe('key');
  });
});
