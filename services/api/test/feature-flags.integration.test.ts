import { createKey, createTestTenant, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const flagsPath = (prefix: 'projects' | 'environments' = 'projects') => `/api/${prefix}/${tenant.project.id}/feature_flags/`;
const rollout = (percentage: number) => ({ groups: [{ properties: [], rollout_percentage: percentage }] });
const create = (body: Record<string, unknown>, key = tenant.personalApiKey) => api.request('POST', flagsPath(), key, body);

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));

describe('feature flag definitions', () => {
  it('creates a flag in the PostHog definition shape and retrieves it under both prefixes', async () => {
    const filters = {
      groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme.test' }], rollout_percentage: 50, variant: 'blue' }],
      multivariate: { variants: [{ key: 'blue', rollout_percentage: 60 }, { key: 'green', rollout_percentage: 40 }] },
      payloads: { blue: '{"shade":1}' },
    };
    const created = await create({ key: 'checkout-colour', name: 'Checkout colour', filters, ensure_experience_continuity: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: 'checkout-colour', name: 'Checkout colour', active: true, deleted: false, ensure_experience_continuity: true, version: 1, filters, created_by: tenant.user.id });
    for (const prefix of ['projects', 'environments'] as const) {
      const { status, body } = await api.request('GET', `${flagsPath(prefix)}${created.body.id}/`, tenant.personalApiKey);
      expect(status).toBe(200);
      expect(body).toEqual(created.body);
    }
  });

  it('fills the defaults PostHog uses when only a key is given', async () => {
    const { status, body } = await create({ key: 'bare' });
    expect(status).toBe(201);
    expect(body).toMatchObject({ name: '', active: true, ensure_experience_continuity: false, filters: rollout(0) });
  });

  it('lists live flags as {count, next, previous, results}, paging with absolute links', async () => {
    const own = await createTestTenant(api.pool, api.config);
    for (const key of ['a', 'b', 'c']) expect((await api.request('POST', `/api/projects/${own.project.id}/feature_flags/`, own.personalApiKey, { key })).status).toBe(201);
    const path = `/api/environments/${own.project.id}/feature_flags/`;
    const all = await api.request('GET', path, own.personalApiKey);
    expect(all.body).toMatchObject({ count: 3, next: null, previous: null });
    expect(all.body.results.map((f: { key: string }) => f.key)).toEqual(['c', 'b', 'a']);

    const first = await api.request('GET', `${path}?limit=2`, own.personalApiKey);
    expect(first.body.results.map((f: { key: string }) => f.key)).toEqual(['c', 'b']);
    const next = new URL(first.body.next);
    expect(`${next.origin}${next.pathname}`).toBe(`${api.config.publicUrl}${path}`);
    expect(next.searchParams.get('offset')).toBe('2');
    const second = await api.request('GET', `${next.pathname}${next.search}`, own.personalApiKey);
    expect(second.body.results.map((f: { key: string }) => f.key)).toEqual(['a']);
    expect(second.body.next).toBeNull();
    expect(new URL(second.body.previous).searchParams.get('offset')).toBe('0');
  });

  it('rejects a bad page size with a 400 naming the parameter', async () => {
    const { status, body } = await api.request('GET', `${flagsPath()}?limit=0`, tenant.personalApiKey);
    expect(status).toBe(400);
    expect(body.attr).toBe('limit');
  });

  it('PATCHes only the given fields and bumps the version', async () => {
    const created = await create({ key: uniqueName('patch'), name: 'before', filters: rollout(10) });
    const { status, body } = await api.request('PATCH', `${flagsPath('environments')}${created.body.id}/`, tenant.personalApiKey, { name: 'after', active: false });
    expect(status).toBe(200);
    expect(body).toMatchObject({ key: created.body.key, name: 'after', active: false, filters: rollout(10), version: 2 });
    const filters = await api.request('PATCH', `${flagsPath()}${created.body.id}/`, tenant.personalApiKey, { filters: rollout(90) });
    expect(filters.body).toMatchObject({ name: 'after', filters: rollout(90), version: 3 });
    expect((await api.request('GET', `${flagsPath()}${created.body.id}/`, tenant.personalApiKey)).body.filters).toEqual(rollout(90));
  });

  it('DELETE is a soft delete: the flag leaves the list and its key is free again', async () => {
    const key = uniqueName('deleted');
    const created = await create({ key });
    const path = `${flagsPath()}${created.body.id}/`;
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', path, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(404);
    const listed = await api.request('GET', `${flagsPath()}?limit=1000`, tenant.personalApiKey);
    expect(listed.body.results.map((f: { key: string }) => f.key)).not.toContain(key);
    const row = await api.pool.query<{ deleted: boolean }>('SELECT deleted FROM feature_flags WHERE id = $1', [created.body.id]);
    expect(row.rows[0]?.deleted).toBe(true);
    const again = await create({ key });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(created.body.id);
  });

  it('keeps keys unique per project, on create and on rename, but not across projects', async () => {
    const key = uniqueName('unique');
    expect((await create({ key })).status).toBe(201);
    const duplicate = await create({ key });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toMatchObject({ type: 'invalid_request', code: 'unique', attr: 'key' });
    const other = await create({ key: uniqueName('other') });
    const rename = await api.request('PATCH', `${flagsPath()}${other.body.id}/`, tenant.personalApiKey, { key });
    expect(rename.status).toBe(400);
    expect(rename.body.attr).toBe('key');
    const elsewhere = await createTestTenant(api.pool, api.config);
    expect((await api.request('POST', `/api/projects/${elsewhere.project.id}/feature_flags/`, elsewhere.personalApiKey, { key })).status).toBe(201);
  });

  it('answers 404 for a flag that does not exist, of another project, or with an id out of range', async () => {
    const elsewhere = await createTestTenant(api.pool, api.config);
    const foreign = await api.request('POST', `/api/projects/${elsewhere.project.id}/feature_flags/`, elsewhere.personalApiKey, { key: 'theirs' });
    for (const id of [foreign.body.id, 'abc', '99999999999']) {
      const { status, body } = await api.request('GET', `${flagsPath()}${id}/`, tenant.personalApiKey);
      expect(status).toBe(404);
      expect(body.code).toBe('not_found');
    }
    expect((await api.request('PATCH', `${flagsPath()}99999999999/`, tenant.personalApiKey, { name: 'x' })).status).toBe(404);
  });
});

describe('invalid definitions are refused with a 400 naming the field', () => {
  const refused = async (body: Record<string, unknown>, attr: string, detail: RegExp) => {
    const response = await create({ key: uniqueName('bad'), ...body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ type: 'invalid_request', code: 'invalid_input', attr, detail: expect.stringMatching(detail) });
  };

  it('variant percentages that do not add up to 100', async () => {
    await refused(
      { filters: { ...rollout(100), multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 40 }] } } },
      'filters.multivariate.variants',
      /add up to 100, not 90/,
    );
  });

  it('an unknown operator', async () => {
    await refused({ filters: { groups: [{ properties: [{ key: 'plan', operator: 'between', value: 1 }] }] } }, 'filters.groups[0].properties[0].operator', /"between" is not a known operator/);
  });

  it('a regular expression that does not compile', async () => {
    await refused({ filters: { groups: [{ properties: [{ key: 'plan', operator: 'regex', value: '(unclosed' }] }] } }, 'filters.groups[0].properties[0].value', /not a valid regular expression/);
  });

  it('a key with characters PostHog does not allow, and a missing key', async () => {
    await refused({ key: 'has space' }, 'key', /must match pattern/);
    const missing = await api.request('POST', flagsPath(), tenant.personalApiKey, { name: 'no key' });
    expect(missing.body).toMatchObject({ attr: 'key', detail: expect.stringMatching(/key/) });
  });

  it('the same checks apply to a PATCH', async () => {
    const created = await create({ key: uniqueName('patch-bad') });
    const { status, body } = await api.request('PATCH', `${flagsPath()}${created.body.id}/`, tenant.personalApiKey, {
      filters: { groups: [{ properties: [], rollout_percentage: 101 }] },
    });
    expect(status).toBe(400);
    expect(body.attr).toBe('filters.groups[0].rollout_percentage');
    expect((await api.request('GET', `${flagsPath()}${created.body.id}/`, tenant.personalApiKey)).body.filters).toEqual(rollout(0));
  });
});

describe('access to the feature flag endpoints', () => {
  it('lets feature_flag:read list and retrieve but not write, naming the missing scope', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['feature_flag:read']);
    expect((await api.request('GET', flagsPath(), reader)).status).toBe(200);
    const created = await create({ key: uniqueName('scoped') });
    expect((await api.request('GET', `${flagsPath()}${created.body.id}/`, reader)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', flagsPath(), { key: uniqueName('nope') }],
      ['PATCH', `${flagsPath()}${created.body.id}/`, { name: 'nope' }],
      ['DELETE', `${flagsPath()}${created.body.id}/`, undefined],
    ] as const) {
      const response = await api.request(method, path, reader, body);
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ type: 'permission_denied', code: 'missing_scope', detail: expect.stringMatching(/'feature_flag:write'/) });
    }
    expect((await api.request('GET', `${flagsPath()}${created.body.id}/`, tenant.personalApiKey)).body.name).toBe('');
  });

  it('refuses a key without feature_flag:read, naming the scope', async () => {
    const other = await createKey(api.pool, api.config, tenant.user.id, ['cohort:read']);
    const { status, body } = await api.request('GET', flagsPath('environments'), other);
    expect(status).toBe(403);
    expect(body.detail).toMatch(/'feature_flag:read'/);
  });

  it('lets feature_flag:write do everything, since write implies read', async () => {
    const writer = await createKey(api.pool, api.config, tenant.user.id, ['feature_flag:write']);
    const created = await create({ key: uniqueName('writer') }, writer);
    expect(created.status).toBe(201);
    expect((await api.request('GET', `${flagsPath()}${created.body.id}/`, writer)).status).toBe(200);
    expect((await api.request('DELETE', `${flagsPath()}${created.body.id}/`, writer)).status).toBe(204);
  });

  it("keeps one project's flags out of another project's reach", async () => {
    const other = await createTestTenant(api.pool, api.config);
    const { status } = await api.request('GET', flagsPath(), other.personalApiKey);
    expect(status).toBe(403);
  });
});
