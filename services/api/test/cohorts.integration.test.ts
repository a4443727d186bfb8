import { randomUUID } from 'node:crypto';
import { createKey, createTestTenant, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const cohortsPath = (prefix: 'projects' | 'environments' = 'projects') => `/api/${prefix}/${tenant.project.id}/cohorts/`;
const create = (body: Record<string, unknown>, key = tenant.personalApiKey) => api.request('POST', cohortsPath(), key, body);
const emailContains = (fragment: string) => ({
  properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value: fragment }] }] },
});

/** A person in Postgres, where ingest keeps them, known by the given distinct ids. */
async function person(teamId: number, properties: Record<string, unknown>, ...distinctIds: string[]): Promise<number> {
  const { rows } = await api.pool.query<{ id: number }>('INSERT INTO persons (uuid, team_id, properties, created_at) VALUES ($1, $2, $3, now()) RETURNING id', [
    randomUUID(),
    teamId,
    properties,
  ]);
  const id = rows[0]!.id;
  for (const distinctId of distinctIds) {
    await api.pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [teamId, distinctId, id]);
  }
  return id;
}

async function members(cohortId: number): Promise<number[]> {
  const { rows } = await api.pool.query<{ person_id: number }>('SELECT person_id FROM cohort_people WHERE cohort_id = $1 ORDER BY person_id', [cohortId]);
  return rows.map((r) => r.person_id);
}

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));

describe('dynamic cohorts', () => {
  it('creates a cohort defined by person-property filters and retrieves it under both prefixes', async () => {
    const filters = emailContains('@acme.test');
    const created = await create({ name: 'Acme staff', description: 'everyone at Acme', filters });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Acme staff', description: 'everyone at Acme', is_static: false, filters, count: null, deleted: false, created_by: tenant.user.id });
    for (const prefix of ['projects', 'environments'] as const) {
      const { status, body } = await api.request('GET', `${cohortsPath(prefix)}${created.body.id}/`, tenant.personalApiKey);
      expect(status).toBe(200);
      expect(body).toEqual(created.body);
    }
  });

  it('refuses a dynamic cohort without filters, and distinct ids for it', async () => {
    const bare = await create({ name: 'nothing' });
    expect(bare.status).toBe(400);
    expect(bare.body.attr).toBe('filters');
    const listed = await create({ name: 'mixed', filters: emailContains('x'), distinct_ids: ['a'] });
    expect(listed.status).toBe(400);
    expect(listed.body.attr).toBe('distinct_ids');
  });

  it('PATCHes the name, description and filters, leaving the rest', async () => {
    const created = await create({ name: 'before', description: 'kept', filters: emailContains('@a.test') });
    const path = `${cohortsPath('environments')}${created.body.id}/`;
    const renamed = await api.request('PATCH', path, tenant.personalApiKey, { name: 'after' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'after', description: 'kept', filters: emailContains('@a.test') });
    const refiltered = await api.request('PATCH', path, tenant.personalApiKey, { filters: emailContains('@b.test') });
    expect(refiltered.body).toMatchObject({ name: 'after', filters: emailContains('@b.test') });
    expect((await api.request('GET', path, tenant.personalApiKey)).body.filters).toEqual(emailContains('@b.test'));
  });

  it('does not let a cohort switch between static and dynamic', async () => {
    const created = await create({ name: 'dynamic', filters: emailContains('x') });
    const { status, body } = await api.request('PATCH', `${cohortsPath()}${created.body.id}/`, tenant.personalApiKey, { is_static: true });
    expect(status).toBe(400);
    expect(body.attr).toBe('is_static');
  });
});

describe('invalid cohort filters are refused with a 400 naming the field', () => {
  const refused = async (filters: unknown, attr: string, detail: RegExp) => {
    const response = await create({ name: uniqueName('bad'), filters });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ type: 'invalid_request', code: 'invalid_input', attr, detail: expect.stringMatching(detail) });
  };
  const group = (...values: unknown[]) => ({ properties: { type: 'AND', values } });

  it('an unknown operator', async () => {
    await refused(group({ key: 'plan', type: 'person', operator: 'between', value: 1 }), 'filters.properties.values[0].operator', /must be one of: exact, is_not/);
  });

  it('a regular expression that does not compile', async () => {
    await refused(
      { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', operator: 'regex', value: '(unclosed' }] }] } },
      'filters.properties.values[0].values[0].value',
      /not a valid regular expression/,
    );
  });

  it('a date operator without a date', async () => {
    await refused(group({ key: 'signed_up', operator: 'is_date_before', value: 'last tuesday' }), 'filters.properties.values[0].value', /date/);
  });

  it('a filter without the value its operator compares with', async () => {
    await refused(group({ key: 'plan', operator: 'exact' }), 'filters.properties.values[0].value', /is required/);
  });

  it('a group type other than AND or OR', async () => {
    await refused({ properties: { type: 'XOR', values: [] } }, 'filters.properties.type', /AND, OR/);
  });

  it('filters other than person properties, behavioural conditions and cohorts', async () => {
    await refused(group({ key: '$browser', type: 'event', value: 'Chrome' }), 'filters.properties.values[0].type', /person/);
  });

  it('groups nested deeper than the evaluator accepts', async () => {
    const deep = { type: 'AND', values: [{ type: 'AND', values: [{ type: 'AND', values: [{ type: 'AND', values: [] }] }] }] };
    await refused({ properties: deep }, 'filters.properties.values[0].values[0].values[0]', /at most 3 levels/);
  });

  it('filters that are not {properties: group}, and a missing name', async () => {
    await refused({ groups: [] }, 'filters.properties', /is required/);
    const nameless = await create({ filters: emailContains('x') });
    expect(nameless.status).toBe(400);
    expect(nameless.body).toMatchObject({ type: 'invalid_request', attr: 'name' });
  });

  it('the same checks apply to a PATCH, which then changes nothing', async () => {
    const created = await create({ name: uniqueName('patch'), filters: emailContains('x') });
    const path = `${cohortsPath()}${created.body.id}/`;
    const { status, body } = await api.request('PATCH', path, tenant.personalApiKey, { filters: group({ key: 'plan', operator: 'nope', value: 1 }) });
    expect(status).toBe(400);
    expect(body.attr).toBe('filters.properties.values[0].operator');
    expect((await api.request('GET', path, tenant.personalApiKey)).body.filters).toEqual(emailContains('x'));
  });
});

describe('static cohorts', () => {
  it('resolves distinct ids to persons, counting each person once and skipping unknown ids', async () => {
    const alice = await person(tenant.project.id, {}, 'alice-web', 'alice-app');
    const bob = await person(tenant.project.id, {}, 'bob');
    const created = await create({ name: 'Beta testers', is_static: true, distinct_ids: ['alice-web', 'alice-app', 'bob', 'nobody'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ is_static: true, count: 2, filters: {} });
    expect(await members(created.body.id)).toEqual([alice, bob].sort((a, b) => a - b));
  });

  it('does not take members from another project that uses the same distinct id', async () => {
    const other = await createTestTenant(api.pool, api.config);
    await person(other.project.id, {}, 'shared-id');
    const created = await create({ name: 'Nobody here', is_static: true, distinct_ids: ['shared-id'] });
    expect(created.body.count).toBe(0);
  });

  it('PATCH distinct_ids replaces the members; a PATCH without them keeps them', async () => {
    await person(tenant.project.id, {}, 'carol');
    const dave = await person(tenant.project.id, {}, 'dave');
    const created = await create({ name: 'Replace me', is_static: true, distinct_ids: ['carol'] });
    const path = `${cohortsPath()}${created.body.id}/`;
    const replaced = await api.request('PATCH', path, tenant.personalApiKey, { distinct_ids: ['dave'] });
    expect(replaced.status).toBe(200);
    expect(replaced.body.count).toBe(1);
    expect(await members(created.body.id)).toEqual([dave]);
    expect((await api.request('PATCH', path, tenant.personalApiKey, { name: 'Renamed' })).body).toMatchObject({ name: 'Renamed', count: 1 });
  });

  it('refuses filters with conditions on a static cohort, accepting the empty group clients send', async () => {
    const conditions = await create({ name: 'static with filters', is_static: true, filters: emailContains('x') });
    expect(conditions.status).toBe(400);
    expect(conditions.body.attr).toBe('filters');
    const empty = await create({ name: 'static, empty filters', is_static: true, filters: { properties: { type: 'OR', values: [] } } });
    expect(empty.status).toBe(201);
    const patched = await api.request('PATCH', `${cohortsPath()}${empty.body.id}/`, tenant.personalApiKey, { filters: emailContains('x') });
    expect(patched.status).toBe(400);
    expect(patched.body.attr).toBe('filters');
  });
});

describe('listing and deleting', () => {
  it('lists live cohorts newest first as {count, next, previous, results}, with absolute page links', async () => {
    const own = await createTestTenant(api.pool, api.config);
    const path = `/api/projects/${own.project.id}/cohorts/`;
    for (const name of ['one', 'two', 'three']) expect((await api.request('POST', path, own.personalApiKey, { name, is_static: true })).status).toBe(201);
    const all = await api.request('GET', path, own.personalApiKey);
    expect(all.body).toMatchObject({ count: 3, next: null, previous: null });
    expect(all.body.results.map((c: { name: string }) => c.name)).toEqual(['three', 'two', 'one']);
    const first = await api.request('GET', `/api/environments/${own.project.id}/cohorts/?limit=2`, own.personalApiKey);
    const next = new URL(first.body.next);
    expect(`${next.origin}${next.pathname}`).toBe(`${api.config.publicUrl}/api/environments/${own.project.id}/cohorts/`);
    const second = await api.request('GET', `${next.pathname}${next.search}`, own.personalApiKey);
    expect(second.body.results.map((c: { name: string }) => c.name)).toEqual(['one']);
    expect(second.body.next).toBeNull();
    expect(new URL(second.body.previous).searchParams.get('offset')).toBe('0');
    expect((await api.request('GET', `${path}?offset=-1`, own.personalApiKey)).body.attr).toBe('offset');
  });

  it('DELETE is a soft delete: gone from the API, kept in Postgres with deleted = true', async () => {
    const created = await create({ name: uniqueName('doomed'), filters: emailContains('x') });
    const path = `${cohortsPath()}${created.body.id}/`;
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', path, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('PATCH', path, tenant.personalApiKey, { name: 'zombie' })).status).toBe(404);
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(404);
    const listed = await api.request('GET', `${cohortsPath()}?limit=1000`, tenant.personalApiKey);
    expect(listed.body.results.map((c: { id: number }) => c.id)).not.toContain(created.body.id);
    const row = await api.pool.query<{ deleted: boolean; name: string }>('SELECT deleted, name FROM cohorts WHERE id = $1', [created.body.id]);
    expect(row.rows[0]).toEqual({ deleted: true, name: created.body.name });
  });

  it("answers 404 for a cohort that does not exist, belongs to another project, or has an id out of range", async () => {
    const other = await createTestTenant(api.pool, api.config);
    const theirs = await api.request('POST', `/api/projects/${other.project.id}/cohorts/`, other.personalApiKey, { name: 'theirs', is_static: true });
    for (const id of [theirs.body.id, 'abc', '99999999999']) {
      const { status, body } = await api.request('GET', `${cohortsPath()}${id}/`, tenant.personalApiKey);
      expect(status).toBe(404);
      expect(body.code).toBe('not_found');
    }
    expect((await api.request('DELETE', `${cohortsPath()}${theirs.body.id}/`, tenant.personalApiKey)).status).toBe(404);
  });
});

describe('access to the cohort endpoints', () => {
  it('lets cohort:read list and retrieve but not write, naming the missing scope', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['cohort:read']);
    const created = await create({ name: uniqueName('read-only'), is_static: true });
    expect((await api.request('GET', cohortsPath(), reader)).status).toBe(200);
    expect((await api.request('GET', `${cohortsPath()}${created.body.id}/`, reader)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', cohortsPath(), { name: 'nope', is_static: true }],
      ['PATCH', `${cohortsPath()}${created.body.id}/`, { name: 'nope' }],
      ['DELETE', `${cohortsPath()}${created.body.id}/`, undefined],
    ] as const) {
      const response = await api.request(method, path, reader, body);
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ type: 'permission_denied', code: 'missing_scope', detail: expect.stringMatching(/'cohort:write'/) });
    }
  });

  it('refuses a key without cohort:read, naming the scope', async () => {
    const other = await createKey(api.pool, api.config, tenant.user.id, ['feature_flag:read']);
    const { status, body } = await api.request('GET', cohortsPath('environments'), other);
    expect(status).toBe(403);
    expect(body.detail).toMatch(/'cohort:read'/);
  });

  it('lets cohort:write create, since write implies read', async () => {
    const writer = await createKey(api.pool, api.config, tenant.user.id, ['cohort:write']);
    const created = await create({ name: uniqueName('writer'), is_static: true }, writer);
    expect(created.status).toBe(201);
    expect((await api.request('GET', `${cohortsPath()}${created.body.id}/`, writer)).status).toBe(200);
  });
});

/**
 * Flags target cohorts by id (`{type: 'cohort', key: 'id', value: <id>}`). The running decide
 * service reads what this API wrote, and reloads within a second of each change because the API
 * announces it: without the announcement decide would keep its cached definitions for 30 s,
 * longer than these waits.
 */
describe('cohorts created here drive flag evaluation in decide', () => {
  const front = () => api.config.publicUrl;
  let project: TestTenant;
  const ids = { acme: uniqueName('acme'), other: uniqueName('other'), listed: uniqueName('listed') };

  const enabled = async (distinctId: string): Promise<Record<string, boolean>> => {
    const response = await fetch(`${front()}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: project.project.api_token, distinct_id: distinctId }) });
    const body = (await response.json()) as { flags: Record<string, { enabled: boolean }>; errorsWhileComputingFlags: boolean };
    expect(body.errorsWhileComputingFlags).toBe(false);
    return Object.fromEntries(Object.entries(body.flags).map(([key, flag]) => [key, flag.enabled]));
  };
  const everyone = async () => ({ acme: await enabled(ids.acme), other: await enabled(ids.other), listed: await enabled(ids.listed) });
  const projectApi = (method: string, path: string, body?: unknown) => api.request(method, `/api/projects/${project.project.id}${path}`, project.personalApiKey, body);
  const decideShows = (expected: Record<string, Record<string, boolean>>, what: string) =>
    waitFor(async () => JSON.stringify(await everyone()) === JSON.stringify(expected), { timeoutMs: 5_000, what });

  let dynamicId: number;
  let staticId: number;

  beforeAll(async () => {
    project = await createTestTenant(api.pool, api.config);
    await person(project.project.id, { email: 'ann@acme.test' }, ids.acme);
    await person(project.project.id, { email: 'bo@other.test' }, ids.other);
    await person(project.project.id, { email: 'cy@other.test' }, ids.listed);
    dynamicId = (await projectApi('POST', '/cohorts/', { name: 'Acme', filters: emailContains('@acme.test') })).body.id;
    staticId = (await projectApi('POST', '/cohorts/', { name: 'Listed', is_static: true, distinct_ids: [ids.listed] })).body.id;
    const targeting = (cohort: number) => ({ groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort }], rollout_percentage: 100 }] });
    expect((await projectApi('POST', '/feature_flags/', { key: 'dynamic-cohort', filters: targeting(dynamicId) })).status).toBe(201);
    expect((await projectApi('POST', '/feature_flags/', { key: 'static-cohort', filters: targeting(staticId) })).status).toBe(201);
  });

  it('answers flags from static membership and from dynamic filters', async () => {
    await decideShows(
      {
        acme: { 'dynamic-cohort': true, 'static-cohort': false },
        other: { 'dynamic-cohort': false, 'static-cohort': false },
        listed: { 'dynamic-cohort': false, 'static-cohort': true },
      },
      'decide to evaluate both cohort flags',
    );
  });

  it('sees changed filters and changed members at once, and a deleted cohort matches nobody', async () => {
    expect((await projectApi('PATCH', `/cohorts/${dynamicId}/`, { filters: emailContains('bo@') })).status).toBe(200);
    expect((await projectApi('PATCH', `/cohorts/${staticId}/`, { distinct_ids: [ids.acme] })).status).toBe(200);
    await decideShows(
      {
        acme: { 'dynamic-cohort': false, 'static-cohort': true },
        other: { 'dynamic-cohort': true, 'static-cohort': false },
        listed: { 'dynamic-cohort': false, 'static-cohort': false },
      },
      'decide to see the changed cohorts',
    );
    expect((await projectApi('DELETE', `/cohorts/${dynamicId}/`)).status).toBe(204);
    await decideShows(
      {
        acme: { 'dynamic-cohort': false, 'static-cohort': true },
        other: { 'dynamic-cohort': false, 'static-cohort': false },
        listed: { 'dynamic-cohort': false, 'static-cohort': false },
      },
      'decide to drop the deleted cohort',
    );
  });

  it("serves a dynamic cohort's filters to server SDKs for local evaluation", async () => {
    const created = await projectApi('POST', '/cohorts/', { name: 'Local', filters: emailContains('@local.test') });
    const cohorts = async () => {
      const response = await fetch(`${front()}/api/feature_flag/local_evaluation?token=${project.project.api_token}&send_cohorts`, {
        headers: { authorization: `Bearer ${project.personalApiKey}` },
      });
      return ((await response.json()) as { cohorts: Record<string, unknown> }).cohorts;
    };
    const served = await waitFor(async () => (await cohorts())[String(created.body.id)], { timeoutMs: 5_000, what: 'local evaluation to serve the new cohort' });
    expect(served).toEqual(emailContains('@local.test').properties);
    // A static cohort's members are not sent to SDKs, so they cannot evaluate it locally.
    expect(await cohorts()).not.toHaveProperty(String(staticId));
  });
});
