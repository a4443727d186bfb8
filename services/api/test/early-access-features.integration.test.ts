import { createKey, createTestTenant, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const featuresPath = (prefix: 'projects' | 'environments' = 'environments', own = tenant) => `/api/${prefix}/${own.project.id}/early_access_features/`;
const create = (body: Record<string, unknown>, key = tenant.personalApiKey) => api.request('POST', featuresPath(), key, body);
const patch = (id: string, body: Record<string, unknown>) => api.request('PATCH', `${featuresPath()}${id}/`, tenant.personalApiKey, body);
const flag = async (id: number) => (await api.request('GET', `/api/projects/${tenant.project.id}/feature_flags/${id}/`, tenant.personalApiKey)).body;
const createFlag = (body: Record<string, unknown>) => api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, body);
const enrollment = (key: string) => [{ properties: [{ key: `$feature_enrollment/${key}`, type: 'person', operator: 'exact', value: ['true'] }], rollout_percentage: 100 }];

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));

describe('early access features', () => {
  it("creates a feature in PostHog's shape with a flag keyed by its name, carrying the $feature_enrollment super condition", async () => {
    const name = `Dark Mode ${uniqueName('x')}`;
    const created = await create({ name, description: 'Easier on the eyes', stage: 'beta', documentation_url: 'https://docs.example.test/dark' });
    expect(created.status).toBe(201);
    const key = `dark-mode-${name.split(' ').at(-1)!.toLowerCase()}`;
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name,
      description: 'Easier on the eyes',
      stage: 'beta',
      documentation_url: 'https://docs.example.test/dark',
      created_at: expect.any(String),
      feature_flag: expect.objectContaining({ key, name: `Feature Flag for Feature ${name}`, active: true }),
    });
    expect(created.body.feature_flag.filters).toEqual({ groups: [{ properties: [], rollout_percentage: 0, variant: null }], super_groups: enrollment(key) });
    for (const prefix of ['projects', 'environments'] as const) {
      expect((await api.request('GET', `${featuresPath(prefix)}${created.body.id}/`, tenant.personalApiKey)).body).toEqual(created.body);
    }
  });

  it('opens enrollment in the release stages only: a draft has no super condition until it moves to one, and archiving removes it', async () => {
    const created = await create({ name: uniqueName('draft'), stage: 'draft' });
    const { id, feature_flag: madeFlag } = created.body;
    expect(madeFlag.filters.super_groups).toBeUndefined();
    expect((await patch(id, { stage: 'concept' })).body.feature_flag.filters.super_groups).toEqual(enrollment(madeFlag.key));
    const unchanged = (await patch(id, { stage: 'alpha' })).body.feature_flag;
    expect(unchanged).toMatchObject({ version: 2, filters: { super_groups: enrollment(madeFlag.key) } });
    const archived = await patch(id, { stage: 'archived', description: 'shelved' });
    expect(archived.body).toMatchObject({ stage: 'archived', description: 'shelved' });
    expect(archived.body.feature_flag.filters.super_groups).toBeUndefined();
  });

  it('takes an existing flag as feature_flag_id, refusing one already used, multivariate or group-based', async () => {
    const own = await createFlag({ key: uniqueName('own'), filters: { groups: [{ properties: [], rollout_percentage: 20 }] } });
    const created = await create({ name: uniqueName('existing'), stage: 'general-availability', feature_flag_id: own.body.id });
    expect(created.status).toBe(201);
    expect(created.body.feature_flag).toMatchObject({ id: own.body.id, filters: { groups: [{ rollout_percentage: 20 }], super_groups: enrollment(own.body.key) } });

    const multivariate = await createFlag({ key: uniqueName('mv'), filters: { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] } } });
    const grouped = await createFlag({ key: uniqueName('grouped'), filters: { aggregation_group_type_index: 0, groups: [{ rollout_percentage: 100 }] } });
    for (const [flagId, detail] of [
      [own.body.id, /already has a feature/],
      [multivariate.body.id, /Multivariate/],
      [grouped.body.id, /Group-based/],
      [999_999_999, /does not exist/],
    ] as const) {
      const response = await create({ name: uniqueName('refused'), stage: 'beta', feature_flag_id: flagId });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ attr: 'feature_flag_id', detail: expect.stringMatching(detail) });
    }
  });

  it('deletes the feature, keeping its flag without the enrollment condition', async () => {
    const created = await create({ name: uniqueName('gone'), stage: 'beta' });
    const path = `${featuresPath()}${created.body.id}/`;
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', path, tenant.personalApiKey)).status).toBe(404);
    const kept = await flag(created.body.feature_flag.id);
    expect(kept).toMatchObject({ deleted: false, filters: { groups: [{ rollout_percentage: 0 }] } });
    expect(kept.filters.super_groups).toBeUndefined();
  });

  it('lists features as {count, next, previous, results}', async () => {
    const own = await createTestTenant(api.pool, api.config);
    for (const name of ['one', 'two', 'three']) expect((await api.request('POST', featuresPath('projects', own), own.personalApiKey, { name, stage: 'alpha' })).status).toBe(201);
    const page = await api.request('GET', `${featuresPath('environments', own)}?limit=2`, own.personalApiKey);
    expect(page.body).toMatchObject({ count: 3, previous: null });
    expect(page.body.results.map((f: { name: string }) => f.name)).toEqual(['three', 'two']);
  });

  it('answers 400 naming the field for each malformed request', async () => {
    const taken = (await create({ name: uniqueName('taken'), stage: 'beta' })).body.name;
    const cases: [Record<string, unknown>, string][] = [
      [{ stage: 'beta' }, 'name'],
      [{ name: uniqueName('n') }, 'stage'],
      [{ name: uniqueName('n'), stage: 'launched' }, 'stage'],
      [{ name: uniqueName('n'), stage: 'beta', documentation_url: 'not a url' }, 'documentation_url'],
      [{ name: '!!!', stage: 'beta' }, 'name'],
      [{ name: taken, stage: 'beta' }, 'name'],
    ];
    for (const [body, attr] of cases) {
      const response = await create(body);
      expect({ body, status: response.status, attr: response.body.attr }).toEqual({ body, status: 400, attr });
    }
    const created = await create({ name: uniqueName('patched'), stage: 'beta' });
    expect((await patch(created.body.id, { stage: 'shipped' })).body.attr).toBe('stage');
  });
});

describe('access to the early access feature endpoints', () => {
  it('lets early_access_feature:read list and retrieve but not write, naming the missing scope', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['early_access_feature:read']);
    const created = await create({ name: uniqueName('scoped'), stage: 'beta' });
    expect((await api.request('GET', featuresPath(), reader)).status).toBe(200);
    expect((await api.request('GET', `${featuresPath()}${created.body.id}/`, reader)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', featuresPath(), { name: uniqueName('nope'), stage: 'beta' }],
      ['PATCH', `${featuresPath()}${created.body.id}/`, { name: 'nope' }],
      ['DELETE', `${featuresPath()}${created.body.id}/`, undefined],
    ] as const) {
      const response = await api.request(method, path, reader, body);
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ code: 'missing_scope', detail: expect.stringMatching(/'early_access_feature:write'/) });
    }
    const other = await createKey(api.pool, api.config, tenant.user.id, ['survey:write']);
    expect((await api.request('GET', featuresPath(), other)).body.detail).toMatch(/'early_access_feature:read'/);
  });

  it("answers 404 for another project's feature or an id that is not one", async () => {
    const created = await create({ name: uniqueName('mine'), stage: 'beta' });
    const other = await createTestTenant(api.pool, api.config);
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const response = await api.request(method, `${featuresPath('environments', other)}${created.body.id}/`, other.personalApiKey, method === 'PATCH' ? { stage: 'archived' } : undefined);
      expect({ method, status: response.status }).toEqual({ method, status: 404 });
    }
    expect((await api.request('GET', `${featuresPath()}12/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', `${featuresPath()}${created.body.id}/`, tenant.personalApiKey)).body.stage).toBe('beta');
  });
});
