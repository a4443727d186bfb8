import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ControlPlaneStore, MEMBERSHIP_LEVEL } from '@tributary/control-plane';
import { createKey, createMember, createTestTenant, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/cli/bin/tributary.js');
const cli = (...args: string[]) => promisify(execFile)('node', [CLI, ...args], { env: { ...process.env, DATABASE_URL: api.config.databaseUrl } });

let api: ApiHarness;
let tenant: TestTenant;

const membersPath = (prefix: 'projects' | 'environments' = 'environments', project = tenant.project.id) => `/api/${prefix}/${project}/explicit_members/`;

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));

describe('organization members', () => {
  it('lists the users the CLI created and added to the organization under @current', async () => {
    const email = `${uniqueName('cli')}@example.test`;
    const created = JSON.parse((await cli('users:create', '--email', email, '--first-name', 'Ada', '--last-name', 'Lovelace')).stdout);
    expect(created).toMatchObject({ email, first_name: 'Ada', last_name: 'Lovelace', uuid: expect.any(String) });
    await cli('members:add', '--email', email, '--organization', tenant.organizationId, '--level', 'admin');

    const { status, body } = await api.request('GET', '/api/organizations/@current/members/', tenant.personalApiKey);
    expect(status).toBe(200);
    expect(body.count).toBe(2);
    const added = body.results.find((m: { user: { email: string } }) => m.user.email === email);
    expect(added).toEqual({
      id: expect.any(String),
      level: MEMBERSHIP_LEVEL.admin,
      joined_at: expect.any(String),
      updated_at: expect.any(String),
      user: {
        id: created.id,
        uuid: created.uuid,
        distinct_id: expect.any(String),
        first_name: 'Ada',
        last_name: 'Lovelace',
        email,
        is_email_verified: false,
        hedgehog_config: {},
        role_at_organization: '',
      },
    });
    const byId = await api.request('GET', `/api/organizations/${tenant.organizationId}/members/`, tenant.personalApiKey);
    expect(byId.body.results).toEqual(body.results);
  });

  it('the CLI refuses a second user with the same e-mail and members of unknown users or organizations', async () => {
    const email = `${uniqueName('cli')}@example.test`;
    await cli('users:create', '--email', email);
    await expect(cli('users:create', '--email', email)).rejects.toMatchObject({ stderr: expect.stringContaining('already exists') });
    await expect(cli('members:add', '--email', `${uniqueName('nobody')}@example.test`, '--organization', tenant.organizationId)).rejects.toMatchObject({
      stderr: expect.stringContaining('users:create'),
    });
    await expect(cli('members:add', '--email', email, '--organization', '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      stderr: expect.stringContaining('does not exist'),
    });
    await expect(cli('members:add', '--email', email, '--organization', tenant.organizationId, '--level', 'king')).rejects.toMatchObject({
      stderr: expect.stringContaining('member, admin, owner'),
    });
  });

  it('pages with limit and offset, and @current follows the projects a limited key holds', async () => {
    const paged = await api.request('GET', '/api/organizations/@current/members/?limit=1', tenant.personalApiKey);
    expect(paged.body.results).toHaveLength(1);
    expect(paged.body.next).toContain('offset=1');
    expect((await api.request('GET', '/api/organizations/@current/members/?limit=x', tenant.personalApiKey)).status).toBe(400);

    const second = await createTestTenant(api.pool, api.config);
    await new ControlPlaneStore(api.pool, api.config.apiKeyPepper).addMembership(second.organizationId, tenant.user.id, MEMBERSHIP_LEVEL.member);
    const limited = await createKey(api.pool, api.config, tenant.user.id, ['*'], [second.project.id]);
    const members = await api.request('GET', '/api/organizations/@current/members/', limited);
    expect(members.body.results.map((m: { user: { id: number } }) => m.user.id).sort()).toEqual([tenant.user.id, second.user.id].sort());
    expect((await api.request('GET', `/api/organizations/${tenant.organizationId}/members/`, limited)).status).toBe(404);
  });

  it('another organization is a 404, and listing needs organization_member:read', async () => {
    const stranger = await createTestTenant(api.pool, api.config);
    expect((await api.request('GET', `/api/organizations/${stranger.organizationId}/members/`, tenant.personalApiKey)).status).toBe(404);
    const narrow = await createKey(api.pool, api.config, tenant.user.id, ['feature_flag:read']);
    const denied = await api.request('GET', '/api/organizations/@current/members/', narrow);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('missing_scope');
  });
});

describe('explicit project members', () => {
  it('adds, lists, retrieves, changes and removes a member by user uuid under both prefixes', async () => {
    const member = await createMember(api.pool, api.config, tenant.organizationId);
    const created = await api.request('POST', membersPath(), tenant.personalApiKey, { user_uuid: member.user.uuid, level: 1 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      level: 1,
      parent_level: MEMBERSHIP_LEVEL.member,
      parent_membership_id: member.membershipId,
      joined_at: expect.any(String),
      updated_at: expect.any(String),
      user: {
        id: member.user.id,
        uuid: member.user.uuid,
        distinct_id: member.user.distinct_id,
        first_name: '',
        last_name: '',
        email: member.user.email,
        is_email_verified: false,
        hedgehog_config: {},
        role_at_organization: '',
      },
      user_uuid: member.user.uuid,
      effective_level: 1,
    });

    const listed = await api.request('GET', membersPath('projects'), tenant.personalApiKey);
    expect(listed.status).toBe(200);
    expect(listed.body).toContainEqual(created.body);
    const retrieved = await api.request('GET', `${membersPath('projects')}${member.user.uuid}/`, tenant.personalApiKey);
    expect(retrieved.body).toEqual(created.body);

    const promoted = await api.request('PATCH', `${membersPath()}${member.user.uuid}/`, tenant.personalApiKey, { level: 8 });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ id: created.body.id, level: 8, parent_level: 1, effective_level: 8 });

    expect((await api.request('DELETE', `${membersPath()}${member.user.uuid}/`, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', `${membersPath()}${member.user.uuid}/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', membersPath(), tenant.personalApiKey)).body).not.toContainEqual(expect.objectContaining({ id: created.body.id }));
  });

  it('effective_level is the higher of the organization level and the explicit one', async () => {
    const orgAdmin = await createMember(api.pool, api.config, tenant.organizationId, MEMBERSHIP_LEVEL.admin);
    const { body } = await api.request('POST', membersPath(), tenant.personalApiKey, { user_uuid: orgAdmin.user.uuid });
    expect(body).toMatchObject({ level: 1, parent_level: 8, effective_level: 8 });
  });

  it('refuses users outside the organization, a second membership and bad levels, naming the field', async () => {
    const outsider = await createTestTenant(api.pool, api.config);
    const member = await createMember(api.pool, api.config, tenant.organizationId);
    expect((await api.request('POST', membersPath(), tenant.personalApiKey, { user_uuid: member.user.uuid })).status).toBe(201);
    const cases: [unknown, string][] = [
      [{ user_uuid: outsider.user.uuid }, 'user_uuid'],
      [{ user_uuid: '00000000-0000-4000-8000-000000000000' }, 'user_uuid'],
      [{ user_uuid: member.user.uuid }, 'user_uuid'],
      [{ user_uuid: 'not-a-uuid' }, 'user_uuid'],
      [{ level: 8 }, 'user_uuid'],
      [{ user_uuid: (await createMember(api.pool, api.config, tenant.organizationId)).user.uuid, level: 15 }, 'level'],
    ];
    for (const [body, attr] of cases) {
      const response = await api.request('POST', membersPath(), tenant.personalApiKey, body);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ type: 'invalid_request', attr });
    }
    const patch = await api.request('PATCH', `${membersPath()}${member.user.uuid}/`, tenant.personalApiKey, { level: 'admin' });
    expect(patch.status).toBe(400);
    expect(patch.body.attr).toBe('level');
    const moved = await api.request('PATCH', `${membersPath()}${member.user.uuid}/`, tenant.personalApiKey, { level: 8, user_uuid: outsider.user.uuid });
    expect(moved.status).toBe(400);
    expect(moved.body.attr).toBe('user_uuid');
  });

  it('an unknown uuid is a 404 on retrieve, change and removal', async () => {
    const stranger = await createMember(api.pool, api.config, tenant.organizationId);
    for (const uuid of [stranger.user.uuid, 'nope']) {
      expect((await api.request('GET', `${membersPath()}${uuid}/`, tenant.personalApiKey)).status).toBe(404);
      expect((await api.request('PATCH', `${membersPath()}${uuid}/`, tenant.personalApiKey, { level: 8 })).status).toBe(404);
      expect((await api.request('DELETE', `${membersPath()}${uuid}/`, tenant.personalApiKey)).status).toBe(404);
    }
  });

  it('only project admins add, change or remove members; an explicit admin is one', async () => {
    const plain = await createMember(api.pool, api.config, tenant.organizationId);
    const other = await createMember(api.pool, api.config, tenant.organizationId);
    const denied = await api.request('POST', membersPath(), plain.personalApiKey, { user_uuid: other.user.uuid });
    expect(denied.status).toBe(403);
    expect(denied.body.type).toBe('permission_denied');
    expect((await api.request('GET', membersPath(), plain.personalApiKey)).status).toBe(200);

    await api.request('POST', membersPath(), tenant.personalApiKey, { user_uuid: other.user.uuid });
    expect((await api.request('PATCH', `${membersPath()}${other.user.uuid}/`, plain.personalApiKey, { level: 8 })).status).toBe(403);
    expect((await api.request('DELETE', `${membersPath()}${other.user.uuid}/`, plain.personalApiKey)).status).toBe(403);

    await api.request('POST', membersPath(), tenant.personalApiKey, { user_uuid: plain.user.uuid, level: 8 });
    expect((await api.request('PATCH', `${membersPath()}${other.user.uuid}/`, plain.personalApiKey, { level: 8 })).status).toBe(200);
    // Explicit membership is per project: elsewhere in the organization the member is a member again.
    const sibling = await new ControlPlaneStore(api.pool, api.config.apiKeyPepper).createProject(tenant.organizationId, uniqueName('sibling'));
    expect((await api.request('POST', membersPath('environments', sibling.id), plain.personalApiKey, { user_uuid: other.user.uuid })).status).toBe(403);
  });

  it('needs project:read to list and project:write to change', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['project:read']);
    expect((await api.request('GET', membersPath(), reader)).status).toBe(200);
    const member = await createMember(api.pool, api.config, tenant.organizationId);
    const denied = await api.request('POST', membersPath(), reader, { user_uuid: member.user.uuid });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('missing_scope');
    expect((await api.request('GET', membersPath(), await createKey(api.pool, api.config, tenant.user.id, ['dashboard:read']))).status).toBe(403);
  });

  it('the last admin of a project cannot be demoted or removed', async () => {
    // An organization whose only admin rights in the project come from explicit memberships.
    const team = await createTestTenant(api.pool, api.config);
    const store = new ControlPlaneStore(api.pool, api.config.apiKeyPepper);
    const admin = await createMember(api.pool, api.config, team.organizationId);
    const path = membersPath('environments', team.project.id);
    expect((await api.request('POST', path, team.personalApiKey, { user_uuid: admin.user.uuid, level: 8 })).status).toBe(201);
    await store.addMembership(team.organizationId, team.user.id, MEMBERSHIP_LEVEL.member);

    const demoted = await api.request('PATCH', `${path}${admin.user.uuid}/`, admin.personalApiKey, { level: 1 });
    expect(demoted.status).toBe(400);
    expect(demoted.body).toMatchObject({ code: 'last_admin', attr: 'level' });
    const removed = await api.request('DELETE', `${path}${admin.user.uuid}/`, admin.personalApiKey);
    expect(removed.status).toBe(400);
    expect(removed.body.code).toBe('last_admin');
    expect((await api.request('GET', `${path}${admin.user.uuid}/`, admin.personalApiKey)).body).toMatchObject({ level: 8 });

    expect((await api.request('POST', path, admin.personalApiKey, { user_uuid: team.user.uuid, level: 8 })).status).toBe(201);
    expect((await api.request('DELETE', `${path}${admin.user.uuid}/`, admin.personalApiKey)).status).toBe(204);
  });
});
