import { MEMBERSHIP_LEVEL } from '@tributary/control-plane';
import { createKey, createMember, createTestTenant, uniqueName, type TestMember, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
let member: TestMember;

const base = () => `/api/environments/${tenant.project.id}`;
const template = { template_name: 'Board', tiles: [{ name: 'Views', query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }] } } }] };

/** One access-controlled resource of each kind the mixin is mounted on, created by the tenant's owner. */
const resources = {
  dashboard: {
    path: () => `${base()}/dashboards/`,
    create: async (key = tenant.personalApiKey): Promise<number> =>
      (await api.request('POST', `${base()}/dashboards/create_from_template_json/`, key, { template })).body.id,
    change: { name: 'renamed' },
  },
  feature_flag: {
    path: () => `${base()}/feature_flags/`,
    create: async (key = tenant.personalApiKey): Promise<number> => (await api.request('POST', `${base()}/feature_flags/`, key, { key: uniqueName('flag') })).body.id,
    change: { name: 'renamed' },
  },
};

const put = (path: string, body: unknown, key = tenant.personalApiKey) => api.request('PUT', `${path}access_controls/`, key, body);

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));
beforeAll(async () => {
  member = await createMember(api.pool, api.config, tenant.organizationId);
});

describe.each(Object.entries(resources))('access controls on %s', (kind, resource) => {
  it('GET lists the entries; PUT sets one for a member or the default, and null removes it', async () => {
    const path = `${resource.path()}${await resource.create()}/`;
    const empty = await api.request('GET', `${path}access_controls/`, tenant.personalApiKey);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      access_controls: [],
      available_access_levels: ['none', 'viewer', 'editor'],
      default_access_level: 'editor',
      user_access_level: 'editor',
      user_can_edit_access_levels: true,
    });

    expect((await put(path, { access_level: 'viewer' })).status).toBe(200);
    const set = await put(path, { organization_member: member.membershipId, access_level: 'editor' });
    expect(set.status).toBe(200);
    expect(set.body.default_access_level).toBe('viewer');
    expect(set.body.access_controls).toEqual([
      expect.objectContaining({ resource: kind, organization_member: null, access_level: 'viewer', created_by: tenant.user.id }),
      expect.objectContaining({ id: expect.any(String), resource: kind, organization_member: member.membershipId, access_level: 'editor', created_at: expect.any(String) }),
    ]);

    expect((await put(path, { organization_member: member.membershipId, access_level: 'none' })).body.access_controls).toHaveLength(2);
    const removed = await put(path, { organization_member: member.membershipId, access_level: null });
    expect(removed.body.access_controls).toEqual([expect.objectContaining({ organization_member: null, access_level: 'viewer' })]);
    expect((await api.request('GET', `${path}access_controls/`, member.personalApiKey)).body).toMatchObject({ user_access_level: 'viewer', user_can_edit_access_levels: false });
  });

  it('a member whose level is none cannot see the resource: 404, and left out of the list', async () => {
    const id = await resource.create();
    const path = `${resource.path()}${id}/`;
    await put(path, { organization_member: member.membershipId, access_level: 'none' });
    expect((await api.request('GET', path, member.personalApiKey)).status).toBe(404);
    expect((await api.request('PATCH', path, member.personalApiKey, resource.change)).status).toBe(404);
    expect((await api.request('DELETE', path, member.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', `${path}access_controls/`, member.personalApiKey)).status).toBe(404);
    const listed = await api.request('GET', resource.path(), member.personalApiKey);
    expect(listed.body.results.map((r: { id: number }) => r.id)).not.toContain(id);
    const ownerList = await api.request('GET', resource.path(), tenant.personalApiKey);
    expect(ownerList.body.results.map((r: { id: number }) => r.id)).toContain(id);
    expect(listed.body.count).toBe(ownerList.body.count - 1);
  });

  it('a default of none hides the resource from members without an entry, but not from one with an entry', async () => {
    const id = await resource.create();
    const path = `${resource.path()}${id}/`;
    const other = await createMember(api.pool, api.config, tenant.organizationId);
    await put(path, { access_level: 'none' });
    await put(path, { organization_member: member.membershipId, access_level: 'viewer' });
    expect((await api.request('GET', path, other.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', resource.path(), other.personalApiKey)).body.results.map((r: { id: number }) => r.id)).not.toContain(id);
    expect((await api.request('GET', path, member.personalApiKey)).status).toBe(200);
    expect((await api.request('GET', resource.path(), member.personalApiKey)).body.results.map((r: { id: number }) => r.id)).toContain(id);
  });

  it('a viewer can read but not change or delete the resource: 403', async () => {
    const path = `${resource.path()}${await resource.create()}/`;
    expect((await api.request('PATCH', path, member.personalApiKey, resource.change)).status).toBe(200);
    await put(path, { organization_member: member.membershipId, access_level: 'viewer' });
    expect((await api.request('GET', path, member.personalApiKey)).status).toBe(200);
    const patched = await api.request('PATCH', path, member.personalApiKey, resource.change);
    expect(patched.status).toBe(403);
    expect(patched.body.type).toBe('permission_denied');
    expect((await api.request('DELETE', path, member.personalApiKey)).status).toBe(403);
    expect((await api.request('GET', path, tenant.personalApiKey)).status).toBe(200);
  });

  it('project admins and the creator always have access, whatever the entries say', async () => {
    const orgAdmin = await createMember(api.pool, api.config, tenant.organizationId, MEMBERSHIP_LEVEL.admin);
    const explicitAdmin = await createMember(api.pool, api.config, tenant.organizationId);
    await api.request('POST', `${base()}/explicit_members/`, tenant.personalApiKey, { user_uuid: explicitAdmin.user.uuid, level: 8 });
    const creator = await createMember(api.pool, api.config, tenant.organizationId);
    const id = await resource.create(creator.personalApiKey);
    const path = `${resource.path()}${id}/`;
    await put(path, { access_level: 'none' }, creator.personalApiKey);
    for (const who of [orgAdmin, explicitAdmin, creator]) {
      await put(path, { organization_member: who.membershipId, access_level: 'none' }, creator.personalApiKey);
      expect((await api.request('PATCH', path, who.personalApiKey, resource.change)).status).toBe(200);
      expect((await api.request('GET', resource.path(), who.personalApiKey)).body.results.map((r: { id: number }) => r.id)).toContain(id);
    }
    expect((await api.request('GET', path, member.personalApiKey)).status).toBe(404);
  });

  it('only admins and the creator change the entries; bad input is a 400 naming the field', async () => {
    const path = `${resource.path()}${await resource.create()}/`;
    const denied = await put(path, { access_level: 'none' }, member.personalApiKey);
    expect(denied.status).toBe(403);
    const outsider = await createTestTenant(api.pool, api.config);
    const outsiderMembership = (await api.request('GET', '/api/organizations/@current/members/', outsider.personalApiKey)).body.results[0].id;
    for (const [body, attr] of [
      [{ access_level: 'owner' }, 'access_level'],
      [{}, 'access_level'],
      [{ access_level: 'viewer', organization_member: 'me' }, 'organization_member'],
      [{ access_level: 'viewer', organization_member: outsiderMembership }, 'organization_member'],
    ] as const) {
      const response = await put(path, body);
      expect([response.status, response.body.attr]).toEqual([400, attr]);
    }
    expect((await api.request('GET', `${resource.path()}999999999/access_controls/`, tenant.personalApiKey)).status).toBe(404);
  });

  it(`needs ${kind}:read to list entries and ${kind}:write to set them`, async () => {
    const path = `${resource.path()}${await resource.create()}/`;
    const reader = await createKey(api.pool, api.config, tenant.user.id, [`${kind}:read` as 'dashboard:read' | 'feature_flag:read']);
    expect((await api.request('GET', `${path}access_controls/`, reader)).status).toBe(200);
    const denied = await put(path, { access_level: 'none' }, reader);
    expect([denied.status, denied.body.code]).toEqual([403, 'missing_scope']);
  });
});
