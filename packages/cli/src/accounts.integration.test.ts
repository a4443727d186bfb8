import { ControlPlaneStore, MEMBERSHIP_LEVEL } from '@tributary/control-plane';
import { createPool, createTestTenant, testConfig, uniqueName, type TestTenant } from '@tributary/test-support';
import { addMember, issueKey, listOrganizations, listProjects } from './accounts.js';

const config = testConfig();
const pool = createPool(config, { max: 2 });
const store = new ControlPlaneStore(pool, config.apiKeyPepper);
let tenant: TestTenant;
let other: TestTenant;

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  other = await createTestTenant(pool, config);
});
afterAll(() => pool.end());

describe('the CLI never asks for a value no command shows', () => {
  it('orgs:list shows every organization, or a user’s with their level, by id', async () => {
    const all = await listOrganizations(store);
    expect(all).toEqual(expect.arrayContaining([{ id: tenant.organizationId, name: expect.any(String) }, { id: other.organizationId, name: expect.any(String) }]));
    expect(await listOrganizations(store, tenant.user.email)).toEqual([{ id: tenant.organizationId, name: expect.any(String), level: 'owner' }]);
    await expect(listOrganizations(store, 'nobody@example.test')).rejects.toThrow('no user has the e-mail nobody@example.test');
  });

  it('projects:list shows the projects of an organization or of a user, with their ids and organizations', async () => {
    const line = { id: tenant.project.id, name: tenant.project.name, organization_id: tenant.organizationId };
    expect(await listProjects(store, { email: tenant.user.email })).toEqual([line]);
    expect(await listProjects(store, { organization: tenant.organizationId })).toEqual([line]);
    expect(await listProjects(store, {})).toEqual(expect.arrayContaining([line, expect.objectContaining({ id: other.project.id })]));
    expect(await listProjects(store, { email: tenant.user.email, organization: other.organizationId })).toEqual([]);
    await expect(listProjects(store, { organization: '00000000-0000-4000-8000-000000000000' })).rejects.toThrow(/organization 00000000-0000-4000-8000-000000000000 does not exist/);
  });
});

describe('keys:create', () => {
  it('limits a key to projects of the user’s organizations', async () => {
    const { record } = await issueKey(store, { email: tenant.user.email, scopes: ['query:read'], projects: [tenant.project.id], label: 'cli' });
    expect(record.scoped_projects).toEqual([tenant.project.id]);
  });

  it('refuses a project the user is not a member of, naming it, and issues nothing', async () => {
    const before = await store.keysOfUser(tenant.user.id);
    await expect(issueKey(store, { email: tenant.user.email, scopes: ['query:read'], projects: [tenant.project.id, other.project.id], label: 'cli' })).rejects.toThrow(
      `${tenant.user.email} is not a member of project ${other.project.id}'s organization`,
    );
    await expect(issueKey(store, { email: tenant.user.email, scopes: ['query:read'], projects: [2_000_000_000], label: 'cli' })).rejects.toThrow('project 2000000000 does not exist');
    expect(await store.keysOfUser(tenant.user.id)).toEqual(before);
  });
});

describe('members:add', () => {
  it('adds a new member as a member unless --level says otherwise', async () => {
    const user = await store.createUser({ email: `${uniqueName('ann')}@example.test` });
    expect(await addMember(store, { email: user.email, organization: tenant.organizationId })).toMatchObject({ level: 'member', change: 'added' });
    const admin = await store.createUser({ email: `${uniqueName('bob')}@example.test` });
    expect(await addMember(store, { email: admin.email, organization: tenant.organizationId, level: MEMBERSHIP_LEVEL.admin })).toMatchObject({ level: 'admin', change: 'added' });
  });

  it('keeps an existing member’s level when run again without --level, and changes it only with one', async () => {
    const user = await store.createUser({ email: `${uniqueName('cyd')}@example.test` });
    await addMember(store, { email: user.email, organization: tenant.organizationId, level: MEMBERSHIP_LEVEL.admin });
    expect(await addMember(store, { email: user.email, organization: tenant.organizationId })).toMatchObject({ level: 'admin', change: 'unchanged' });
    expect(await store.membershipLevel(tenant.organizationId, user.id)).toBe(MEMBERSHIP_LEVEL.admin);
    expect(await addMember(store, { email: user.email, organization: tenant.organizationId, level: MEMBERSHIP_LEVEL.member })).toMatchObject({ level: 'member', change: 'changed' });
    expect(await store.membershipLevel(tenant.organizationId, user.id)).toBe(MEMBERSHIP_LEVEL.member);
  });

  it('names the organization or user that does not exist', async () => {
    await expect(addMember(store, { email: tenant.user.email, organization: '00000000-0000-4000-8000-000000000000' })).rejects.toThrow(/organization 00000000-0000-4000-8000-000000000000 does not exist; orgs:list/);
    await expect(addMember(store, { email: 'nobody@example.test', organization: tenant.organizationId })).rejects.toThrow(/no user has the e-mail nobody@example.test/);
  });
});
