import { ControlPlaneStore } from '@tributary/control-plane';
import { createKey, createTestTenant, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;
/** A second project of the tenant's organization: it sees the organization-wide annotations. */
let sibling: number;

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  sibling = (await new ControlPlaneStore(api.pool, api.config.apiKeyPepper).createProject(tenant.organizationId, uniqueName('sibling'))).id;
});

const path = (projectId = tenant.project.id, prefix: 'projects' | 'environments' = 'projects') => `/api/${prefix}/${projectId}/annotations/`;
const create = (body: Record<string, unknown>, t: TestTenant = tenant) => api.request('POST', path(t.project.id), t.personalApiKey, body);
const list = async (projectId = tenant.project.id, query = '') => (await api.request('GET', `${path(projectId)}${query}`, tenant.personalApiKey)).body;

async function insight(t: TestTenant = tenant): Promise<{ id: number; short_id: string }> {
  const { body } = await api.request('POST', `/api/projects/${t.project.id}/insights/`, t.personalApiKey, { name: 'Signups', query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signed up' }] } });
  return body;
}
async function dashboard(t: TestTenant = tenant): Promise<number> {
  return (await api.request('POST', `/api/projects/${t.project.id}/dashboards/`, t.personalApiKey, { name: 'Growth' })).body.id;
}

describe('annotations', () => {
  it("creates one on an insight in PostHog's shape, with the insight's and dashboard's names and its creator", async () => {
    const { id, short_id } = await insight();
    const dashboardId = await dashboard();
    const created = await create({ content: 'Launched pricing', date_marker: '2026-03-01T10:00:00Z', dashboard_item: id, dashboard_id: dashboardId });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      content: 'Launched pricing',
      date_marker: '2026-03-01T10:00:00.000Z',
      creation_type: 'USR',
      dashboard_item: id,
      dashboard_id: dashboardId,
      dashboard_name: 'Growth',
      insight_short_id: short_id,
      insight_name: 'Signups',
      insight_derived_name: null,
      created_by: expect.objectContaining({ id: tenant.user.id, email: tenant.user.email }),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      deleted: false,
      scope: 'dashboard_item',
    });
    for (const prefix of ['projects', 'environments'] as const) {
      const read = await api.request('GET', `${path(tenant.project.id, prefix)}${created.body.id}/`, tenant.personalApiKey);
      expect(read.body).toEqual(created.body);
    }
  });

  it('lists newest date first, searches content, pages with limit and offset', async () => {
    const tag = uniqueName('release');
    await create({ content: `${tag} one`, date_marker: '2026-02-01T00:00:00Z', scope: 'project' });
    await create({ content: `${tag} two`, date_marker: '2026-02-03T00:00:00Z', scope: 'project' });
    await create({ content: `${tag} three`, date_marker: '2026-02-02T00:00:00Z', scope: 'project' });
    const found = await list(tenant.project.id, `?search=${tag}`);
    expect(found.count).toBe(3);
    expect(found.results.map((a: { content: string }) => a.content)).toEqual([`${tag} two`, `${tag} three`, `${tag} one`]);
    const page = await list(tenant.project.id, `?search=${tag}&limit=1&offset=1`);
    expect(page.results.map((a: { content: string }) => a.content)).toEqual([`${tag} three`]);
    expect(page.next).toContain('offset=2');
    expect(page.previous).toContain('offset=0');
  });

  it('deletes softly by PATCH deleted, which a PATCH undoes; DELETE is refused as PostHog refuses it', async () => {
    const created = await create({ content: 'to delete', scope: 'project' });
    const one = `${path()}${created.body.id}/`;
    expect((await api.request('DELETE', one, tenant.personalApiKey)).status).toBe(405);
    const deleted = await api.request('PATCH', one, tenant.personalApiKey, { deleted: true });
    expect(deleted.body.deleted).toBe(true);
    expect((await api.request('GET', one, tenant.personalApiKey)).status).toBe(404);
    expect((await list()).results.map((a: { id: number }) => a.id)).not.toContain(created.body.id);
    const restored = await api.request('PATCH', one, tenant.personalApiKey, { deleted: false, content: 'back' });
    expect(restored.body).toMatchObject({ deleted: false, content: 'back' });
    expect((await api.request('GET', one, tenant.personalApiKey)).body.content).toBe('back');
  });

  it("shows an organization-wide annotation in the organization's other projects, and a project one only in its own", async () => {
    const orgWide = await create({ content: uniqueName('org'), scope: 'organization' });
    const projectOnly = await create({ content: uniqueName('proj'), scope: 'project' });
    const inSibling = (await list(sibling)).results.map((a: { id: number }) => a.id);
    expect(inSibling).toContain(orgWide.body.id);
    expect(inSibling).not.toContain(projectOnly.body.id);
    expect((await api.request('GET', `${path(sibling)}${projectOnly.body.id}/`, tenant.personalApiKey)).status).toBe(404);
  });

  it("never shows or changes another organization's annotations, and refuses its insights and dashboards as targets", async () => {
    const theirs = await create({ content: 'secret', scope: 'organization' }, other);
    expect(theirs.status).toBe(201);
    expect((await list()).results.map((a: { id: number }) => a.id)).not.toContain(theirs.body.id);
    const one = `${path()}${theirs.body.id}/`;
    expect((await api.request('GET', one, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('PATCH', one, tenant.personalApiKey, { content: 'mine now' })).status).toBe(404);
    const theirInsight = await insight(other);
    const onTheirs = await create({ content: 'x', dashboard_item: theirInsight.id });
    expect(onTheirs.status).toBe(400);
    expect(onTheirs.body).toMatchObject({ attr: 'dashboard_item' });
    const onTheirDashboard = await create({ content: 'x', scope: 'dashboard', dashboard_id: await dashboard(other) });
    expect(onTheirDashboard.status).toBe(400);
    expect(onTheirDashboard.body).toMatchObject({ attr: 'dashboard_id' });
  });

  it('refuses bad input with a 400 naming the field', async () => {
    for (const [body, attr] of [
      [{ scope: 'everywhere' }, 'scope'],
      [{ creation_type: 'BOT' }, 'creation_type'],
      [{ date_marker: 'yesterday' }, 'date_marker'],
      [{ date_marker: '2026-02-30T00:00:00Z' }, 'date_marker'],
      [{ date_marker: '0001-01-01T00:00:00+01:00' }, 'date_marker'],
      [{ dashboard_item: 'abc' }, 'dashboard_item'],
      [{ dashboard_item: 99_999_999_999 }, 'dashboard_item'],
      [{ content: 7 }, 'content'],
    ] as const) {
      const response = await create(body);
      expect({ body, status: response.status, attr: response.body?.attr }).toEqual({ body, status: 400, attr });
    }
  });

  it('needs annotation:read to read and annotation:write to write', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['annotation:read']);
    expect((await api.request('GET', path(), reader)).status).toBe(200);
    const refused = await api.request('POST', path(), reader, { content: 'no' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'missing_scope' });
    const unrelated = await createKey(api.pool, api.config, tenant.user.id, ['insight:read']);
    expect((await api.request('GET', path(), unrelated)).status).toBe(403);
  });
});
