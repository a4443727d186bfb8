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

describe('personal API keys', () => {
  it('shows the value once, on creation, and stores only its hash', async () => {
    const created = await api.request('POST', '/api/personal_api_keys/', tenant.personalApiKey, { label: 'ci', scopes: ['feature_flag:read'], scoped_projects: [tenant.project.id] });
    expect(created.status).toBe(201);
    const value: string = created.body.value;
    expect(value).toMatch(/^phx_[A-Za-z0-9]{43}$/);
    expect(created.body).toMatchObject({ label: 'ci', scopes: ['feature_flag:read'], scoped_projects: [tenant.project.id], mask_value: `${value.slice(0, 6)}...${value.slice(-4)}`, last_used_at: null });

    const listed = await api.request('GET', '/api/personal_api_keys/', tenant.personalApiKey);
    expect(listed.status).toBe(200);
    expect(listed.body.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(listed.text).not.toContain(value);
    expect(listed.body.find((k: { id: string }) => k.id === created.body.id)).not.toHaveProperty('value');

    const row = await api.pool.query<{ row: string }>('SELECT row_to_json(k)::text AS row FROM personal_api_keys k WHERE id = $1', [created.body.id]);
    expect(row.rows).toHaveLength(1);
    expect(row.rows[0]!.row).not.toContain(value);
    expect(row.rows[0]!.row).not.toContain(value.slice(4));

    expect((await api.request('GET', `/api/projects/${tenant.project.id}/feature_flags/`, value)).status).toBe(200);
  });

  it('DELETE revokes the key at once; deleting it again, or a key of another user, is a 404', async () => {
    const created = await api.request('POST', '/api/personal_api_keys/', tenant.personalApiKey, { label: 'temp', scopes: ['*'] });
    const value: string = created.body.value;
    expect((await api.request('GET', '/api/projects/', value)).status).toBe(200);
    expect((await api.request('DELETE', `/api/personal_api_keys/${created.body.id}/`, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', '/api/projects/', value)).status).toBe(401);
    expect((await api.request('DELETE', `/api/personal_api_keys/${created.body.id}/`, tenant.personalApiKey)).status).toBe(404);

    const stranger = await createTestTenant(api.pool, api.config);
    const theirs = await api.request('POST', '/api/personal_api_keys/', stranger.personalApiKey, { label: 'theirs', scopes: ['*'] });
    expect((await api.request('DELETE', `/api/personal_api_keys/${theirs.body.id}/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', '/api/projects/', theirs.body.value)).status).toBe(200);
    expect((await api.request('GET', '/api/personal_api_keys/', tenant.personalApiKey)).body.map((k: { id: string }) => k.id)).not.toContain(theirs.body.id);
  });

  it('refuses unknown scopes, a missing label and projects the user cannot reach, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ label: 'x', scopes: ['everything'] }, 'scopes'],
      [{ scopes: ['*'] }, 'label'],
      [{ label: 'x', scopes: ['*'], scoped_projects: [(await createTestTenant(api.pool, api.config)).project.id] }, 'scoped_projects'],
    ];
    for (const [body, attr] of cases) {
      const { status, body: error } = await api.request('POST', '/api/personal_api_keys/', tenant.personalApiKey, body);
      expect(status).toBe(400);
      expect(error).toMatchObject({ type: 'invalid_request', attr });
    }
  });

  it('never issues a key with more power than the key asking for it', async () => {
    const narrow = await createKey(api.pool, api.config, tenant.user.id, ['personal_api_key:write', 'feature_flag:read'], [tenant.project.id]);
    const wider = await api.request('POST', '/api/personal_api_keys/', narrow, { label: 'escalate', scopes: ['*'], scoped_projects: [tenant.project.id] });
    expect(wider.status).toBe(403);
    expect(wider.body).toMatchObject({ type: 'permission_denied', detail: expect.stringMatching(/'\*'/) });
    const unlimited = await api.request('POST', '/api/personal_api_keys/', narrow, { label: 'escalate', scopes: ['feature_flag:read'] });
    expect(unlimited.status).toBe(403);
    expect(unlimited.body.detail).toMatch(/project/);
    const elsewhere = await api.request('POST', '/api/personal_api_keys/', narrow, { label: 'escalate', scopes: ['feature_flag:read'], scoped_projects: [sibling.id] });
    expect(elsewhere.status).toBe(403);
    const same = await api.request('POST', '/api/personal_api_keys/', narrow, { label: 'same', scopes: ['feature_flag:read'], scoped_projects: [tenant.project.id] });
    expect(same.status).toBe(201);
  });

  it('needs the personal_api_key scopes, naming the missing one', async () => {
    const key = await createKey(api.pool, api.config, tenant.user.id, ['project:read']);
    const list = await api.request('GET', '/api/personal_api_keys/', key);
    expect(list.status).toBe(403);
    expect(list.body.detail).toMatch(/'personal_api_key:read'/);
    const create = await api.request('POST', '/api/personal_api_keys/', key, { label: 'x', scopes: ['project:read'] });
    expect(create.status).toBe(403);
    expect(create.body.detail).toMatch(/'personal_api_key:write'/);
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
