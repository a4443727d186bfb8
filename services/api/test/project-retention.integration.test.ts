import type { TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const project = () => `/api/projects/${tenant.project.id}/`;
const patch = (body: object) => api.request('PATCH', project(), tenant.personalApiKey, body);

const setup = useApi();
beforeAll(() => {
  ({ api, tenant } = setup);
});

describe("a project's event retention", () => {
  it('keeps events until set, is set in days with PATCH /api/projects/:id/, and is unset with null', async () => {
    expect((await api.request('GET', project(), tenant.personalApiKey)).body).toMatchObject({ event_retention_days: null });
    expect(await patch({ event_retention_days: 90 })).toMatchObject({ status: 200, body: { id: tenant.project.id, event_retention_days: 90 } });
    // Other changes leave it as it is.
    expect(await patch({ name: 'renamed' })).toMatchObject({ status: 200, body: { name: 'renamed', event_retention_days: 90 } });
    expect((await api.request('GET', '/api/projects/', tenant.personalApiKey)).body.results).toEqual([expect.objectContaining({ id: tenant.project.id, event_retention_days: 90 })]);
    expect(await patch({ event_retention_days: null })).toMatchObject({ status: 200, body: { event_retention_days: null } });
  });

  it.each([0, -1, 1.5, '30', 36_501])('refuses %p, naming the field', async (value) => {
    const { status, body } = await patch({ event_retention_days: value });
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'invalid_request', attr: 'event_retention_days' });
  });
});
