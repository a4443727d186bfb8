import { createKey, createTestTenant, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
});

const base = (t: TestTenant = tenant, prefix: 'projects' | 'environments' = 'projects') => `/api/${prefix}/${t.project.id}`;
const get = (path: string, key = tenant.personalApiKey) => api.request('GET', path, key);

/** Group types and groups as ingest keeps them in Postgres. */
async function groupType(t: TestTenant, index: number, type: string): Promise<void> {
  await api.pool.query('INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, $2, $3)', [t.project.id, type, index]);
}
async function group(t: TestTenant, index: number, key: string, properties: Record<string, unknown>, createdAt: string): Promise<void> {
  await api.pool.query('INSERT INTO groups (team_id, group_type_index, group_key, properties, created_at) VALUES ($1, $2, $3, $4, $5)', [
    t.project.id,
    index,
    key,
    properties,
    createdAt,
  ]);
}

beforeAll(async () => {
  await groupType(tenant, 0, 'company');
  await groupType(tenant, 1, 'workspace');
  await group(tenant, 0, 'acme', { name: 'Acme Inc', plan: 'pro', seats: 10 }, '2026-01-03T00:00:00Z');
  await group(tenant, 0, 'globex', { name: 'Globex', plan: 'free' }, '2026-01-02T00:00:00Z');
  await group(tenant, 0, 'initech', { name: 'Initech', plan: 'pro' }, '2026-01-01T00:00:00Z');
  await group(tenant, 1, 'ws-1', { region: 'eu' }, '2026-01-01T00:00:00Z');
  // Another project's groups share keys and properties, and must never show.
  await groupType(other, 0, 'company');
  await group(other, 0, 'acme', { name: 'Acme (other project)', plan: 'enterprise' }, '2026-01-04T00:00:00Z');
  await group(other, 0, 'umbrella', { name: 'Umbrella', secret: 'x' }, '2026-01-04T00:00:00Z');
});

describe('GET /groups/', () => {
  it("lists one type's groups newest first, in PostHog's shape, under both prefixes", async () => {
    for (const prefix of ['projects', 'environments'] as const) {
      const { status, body } = await get(`${base(tenant, prefix)}/groups/?group_type_index=0`);
      expect(status).toBe(200);
      expect(body).toEqual({
        next: null,
        previous: null,
        results: [
          { group_type_index: 0, group_key: 'acme', group_properties: { name: 'Acme Inc', plan: 'pro', seats: 10 }, created_at: '2026-01-03T00:00:00.000Z' },
          { group_type_index: 0, group_key: 'globex', group_properties: { name: 'Globex', plan: 'free' }, created_at: '2026-01-02T00:00:00.000Z' },
          { group_type_index: 0, group_key: 'initech', group_properties: { name: 'Initech', plan: 'pro' }, created_at: '2026-01-01T00:00:00.000Z' },
        ],
      });
    }
  });

  it('requires group_type_index, as PostHog, with a 400 naming it', async () => {
    for (const query of ['', '?group_type_index=', '?group_type_index=5', '?group_type_index=x']) {
      const { status, body } = await get(`${base()}/groups/${query}`);
      expect(status).toBe(400);
      expect(body).toMatchObject({ attr: 'group_type_index' });
    }
  });

  it('searches property text (any case) or the exact key', async () => {
    const keys = async (search: string) => (await get(`${base()}/groups/?group_type_index=0&search=${encodeURIComponent(search)}`)).body.results.map((g: { group_key: string }) => g.group_key);
    expect(await keys('acme inc')).toEqual(['acme']);
    expect(await keys('PRO')).toEqual(['acme', 'initech']);
    expect(await keys('GLOBEX')).toEqual(['globex']);
    expect(await keys('glob')).toEqual(['globex']); // in its name property
    expect(await keys('%')).toEqual([]);
  });

  it('pages with a cursor to the next page, and refuses a cursor it did not write', async () => {
    const first = await get(`${base()}/groups/?group_type_index=0&limit=2`);
    expect(first.body.results.map((g: { group_key: string }) => g.group_key)).toEqual(['acme', 'globex']);
    const next = new URL(first.body.next as string);
    expect(next.searchParams.get('limit')).toBe('2');
    const second = await get(`${base()}${next.pathname.slice(base().length)}${next.search}`);
    expect(second.body).toMatchObject({ next: null, results: [{ group_key: 'initech' }] });
    const forged = (cursor: object) => Buffer.from(JSON.stringify(cursor)).toString('base64url');
    for (const cursor of ['nonsense', forged({ created_at: '1', group_key: 'a' }), forged({ created_at: '2026-02-30T00:00:00.000Z', group_key: 'a' }), forged({ created_at: '2026-01-01T00:00:00.000Z', group_key: 'a\u0000' })]) {
      const bad = await get(`${base()}/groups/?group_type_index=0&cursor=${cursor}`);
      expect(bad.status).toBe(404);
      expect(bad.body).toMatchObject({ detail: 'Invalid cursor' });
    }
  });

  it("never shows another project's groups, whatever the search", async () => {
    const all = await get(`${base()}/groups/?group_type_index=0&search=umbrella`);
    expect(all.body.results).toEqual([]);
    const theirs = await get(`${base(other)}/groups/?group_type_index=0`);
    expect(theirs.status).toBe(403);
  });
});

describe('GET /groups/find/', () => {
  it('finds a group by type and exact key', async () => {
    const { status, body } = await get(`${base()}/groups/find/?group_type_index=0&group_key=acme`);
    expect(status).toBe(200);
    expect(body).toEqual({ group_type_index: 0, group_key: 'acme', group_properties: { name: 'Acme Inc', plan: 'pro', seats: 10 }, created_at: '2026-01-03T00:00:00.000Z', notebook: null });
  });

  it("is a 404 for a key of another type or another project, and a 400 without its parameters", async () => {
    expect((await get(`${base()}/groups/find/?group_type_index=1&group_key=acme`)).status).toBe(404);
    expect((await get(`${base()}/groups/find/?group_type_index=0&group_key=umbrella`)).status).toBe(404);
    const missing = await get(`${base()}/groups/find/?group_type_index=0`);
    expect(missing.status).toBe(400);
    expect(missing.body.attr).toBe('group_key');
  });
});

describe('group property definitions and values', () => {
  it("names each type's properties with how many groups have them, most common first", async () => {
    const { status, body } = await get(`${base()}/groups/property_definitions/`);
    expect(status).toBe(200);
    expect(body).toEqual({
      '0': [
        { name: 'name', count: 3 },
        { name: 'plan', count: 3 },
        { name: 'seats', count: 1 },
      ],
      '1': [{ name: 'region', count: 1 }],
    });
  });

  it("gives a property's values with counts, filtered by value; another project's values never", async () => {
    expect((await get(`${base()}/groups/property_values/?group_type_index=0&key=plan`)).body).toEqual([
      { name: 'pro', count: 2 },
      { name: 'free', count: 1 },
    ]);
    expect((await get(`${base()}/groups/property_values/?group_type_index=0&key=plan&value=FR`)).body).toEqual([{ name: 'free', count: 1 }]);
    expect((await get(`${base()}/groups/property_values/?group_type_index=0&key=secret`)).body).toEqual([]);
    expect((await get(`${base()}/groups/property_values/?group_type_index=0&key=seats`)).body).toEqual([{ name: '10', count: 1 }]);
    const missing = await get(`${base()}/groups/property_values/?group_type_index=0`);
    expect(missing.status).toBe(400);
    expect(missing.body.attr).toBe('key');
  });
});

describe('/groups_types/', () => {
  it('lists the types by index, and names them with update_metadata, returning the list', async () => {
    expect((await get(`${base()}/groups_types/`)).body).toEqual([
      { group_type: 'company', group_type_index: 0, name_singular: null, name_plural: null },
      { group_type: 'workspace', group_type_index: 1, name_singular: null, name_plural: null },
    ]);
    const named = await api.request('PATCH', `${base(tenant, 'environments')}/groups_types/update_metadata/`, tenant.personalApiKey, [
      { group_type_index: 0, name_singular: 'Account', name_plural: 'Accounts' },
      { group_type_index: 1, name_plural: 'Spaces' },
    ]);
    expect(named.status).toBe(200);
    expect(named.body).toEqual([
      { group_type: 'company', group_type_index: 0, name_singular: 'Account', name_plural: 'Accounts' },
      { group_type: 'workspace', group_type_index: 1, name_singular: null, name_plural: 'Spaces' },
    ]);
    // A name left out stays; null clears it.
    const cleared = await api.request('PATCH', `${base()}/groups_types/update_metadata/`, tenant.personalApiKey, [{ group_type_index: 0, name_plural: null }]);
    expect(cleared.body[0]).toEqual({ group_type: 'company', group_type_index: 0, name_singular: 'Account', name_plural: null });
  });

  it('changes nothing when one of the types is not the project\'s (404), and refuses a bad body with a 400', async () => {
    const missing = await api.request('PATCH', `${base()}/groups_types/update_metadata/`, tenant.personalApiKey, [
      { group_type_index: 1, name_singular: 'Changed?' },
      { group_type_index: 3, name_singular: 'None' },
    ]);
    expect(missing.status).toBe(404);
    expect((await get(`${base()}/groups_types/`)).body[1].name_singular).toBeNull();
    const bad = await api.request('PATCH', `${base()}/groups_types/update_metadata/`, tenant.personalApiKey, { group_type_index: 0 });
    expect(bad.status).toBe(400);
    const tooLong = await api.request('PATCH', `${base()}/groups_types/update_metadata/`, tenant.personalApiKey, [{ group_type_index: 0, name_singular: 'x'.repeat(401) }]);
    expect(tooLong.status).toBe(400);
    // The other project's type 0 kept its names.
    expect((await get(`${base(other)}/groups_types/`, other.personalApiKey)).body).toEqual([{ group_type: 'company', group_type_index: 0, name_singular: null, name_plural: null }]);
  });

  it('needs group:read to read and group:write to name', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['group:read']);
    expect((await get(`${base()}/groups/?group_type_index=0`, reader)).status).toBe(200);
    const refused = await api.request('PATCH', `${base()}/groups_types/update_metadata/`, reader, [{ group_type_index: 0, name_singular: 'x' }]);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'missing_scope' });
    const unrelated = await createKey(api.pool, api.config, tenant.user.id, ['cohort:read']);
    expect((await get(`${base()}/groups_types/`, unrelated)).status).toBe(403);
  });
});
