import { randomUUID } from 'node:crypto';
import { createKey, createTestTenant, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';
import { startReadServices, type ReadServices } from './isolated-stores.js';

let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
});

const cohorts = (t: TestTenant = tenant) => `/api/projects/${t.project.id}/cohorts/`;

/** A person in Postgres, where ingest keeps them, known by the given distinct ids; returns its uuid. */
async function person(t: TestTenant, properties: Record<string, unknown>, ...distinctIds: string[]): Promise<string> {
  const uuid = randomUUID();
  const { rows } = await api.pool.query<{ id: number }>('INSERT INTO persons (uuid, team_id, properties, created_at) VALUES ($1, $2, $3, now()) RETURNING id', [uuid, t.project.id, properties]);
  for (const distinctId of distinctIds) {
    await api.pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [t.project.id, distinctId, rows[0]!.id]);
  }
  return uuid;
}

/** The uuids of a cohort's members, as Postgres lists them. */
async function members(cohortId: number): Promise<string[]> {
  const { rows } = await api.pool.query<{ uuid: string }>('SELECT p.uuid FROM cohort_people c JOIN persons p ON p.id = c.person_id WHERE c.cohort_id = $1 ORDER BY p.uuid', [cohortId]);
  return rows.map((r) => r.uuid);
}

/** A multipart form as PostHog's UI sends it: the cohort's fields and the CSV in `csv`. */
async function upload(method: 'POST' | 'PATCH', path: string, fields: Record<string, string>, csv?: string | Blob, field = 'csv', key = tenant.personalApiKey) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (csv !== undefined) form.append(field, typeof csv === 'string' ? new Blob([csv], { type: 'text/csv' }) : csv, 'people.csv');
  const response = await fetch(`${api.url}${path}`, { method, headers: { authorization: `Bearer ${key}` }, body: form });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const sorted = (uuids: string[]) => [...uuids].sort();

describe('a static cohort from a CSV upload', () => {
  it('creates the cohort from a column of distinct ids, each person once, unknown ids skipped', async () => {
    const ann = await person(tenant, {}, 'ann-web', 'ann-app');
    const bo = await person(tenant, {}, 'bo');
    const created = await upload('POST', cohorts(), { name: 'Beta', is_static: 'true' }, 'ann-web\nann-app\nbo\nnobody\n');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Beta', is_static: true, count: 2, filters: {} });
    expect(await members(created.body.id)).toEqual(sorted([ann, bo]));
  });

  it('reads a column headed email (any case) or person_id (uuids)', async () => {
    const cy = await person(tenant, { email: 'Cy@Example.test' }, uniqueName('cy'));
    const dee = await person(tenant, {}, uniqueName('dee'));
    const byEmail = await upload('POST', cohorts(), { name: 'By email', is_static: 'true' }, 'name,email\nCy,cy@example.TEST\nZed,zed@example.test\n');
    expect(await members(byEmail.body.id)).toEqual([cy]);
    const byUuid = await upload('POST', cohorts(), { name: 'By uuid', is_static: 'true' }, `person_id\n${dee}\nnot-a-uuid\n${randomUUID()}\n`);
    expect(byUuid.status).toBe(201);
    expect(await members(byUuid.body.id)).toEqual([dee]);
  });

  it("adds nothing for another project's persons, whether named by distinct id, email or uuid", async () => {
    const shared = uniqueName('shared');
    const theirs = await person(other, { email: `${shared}@them.test` }, shared);
    const mine = await person(tenant, {}, shared);
    const byId = await upload('POST', cohorts(), { name: 'shared id', is_static: 'true' }, `${shared}\n`);
    expect(await members(byId.body.id)).toEqual([mine]);
    const byEmail = await upload('POST', cohorts(), { name: 'their email', is_static: 'true' }, `email\n${shared}@them.test\n`);
    expect(byEmail.body.count).toBe(0);
    const byUuid = await upload('POST', cohorts(), { name: 'their uuid', is_static: 'true' }, `person_id\n${theirs}\n`);
    expect(byUuid.body.count).toBe(0);
  });

  it('PATCH with a CSV adds to the members, as PostHog; a CSV on a dynamic cohort or another project\'s cohort is refused', async () => {
    const first = await person(tenant, {}, uniqueName('first'));
    const secondId = uniqueName('second');
    const second = await person(tenant, {}, secondId);
    const created = await api.request('POST', cohorts(), tenant.personalApiKey, { name: 'Grows', is_static: true, distinct_ids: [] });
    await api.request('PATCH', `${cohorts()}${created.body.id}/add_persons_to_static_cohort/`, tenant.personalApiKey, { person_ids: [first] });
    const patched = await upload('PATCH', `${cohorts()}${created.body.id}/`, { name: 'Grown' }, `distinct_id\n${secondId}\n`);
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Grown', count: 2 });
    expect(await members(created.body.id)).toEqual(sorted([first, second]));
    const dynamic = await api.request('POST', cohorts(), tenant.personalApiKey, { name: 'dyn', filters: { properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] } } });
    const onDynamic = await upload('PATCH', `${cohorts()}${dynamic.body.id}/`, {}, 'x\n');
    expect(onDynamic.status).toBe(400);
    const theirCohort = await api.request('POST', cohorts(other), other.personalApiKey, { name: 'theirs', is_static: true, distinct_ids: [] });
    expect((await upload('PATCH', `${cohorts()}${theirCohort.body.id}/`, {}, `${secondId}\n`)).status).toBe(404);
    expect((await upload('PATCH', `${cohorts(other)}${theirCohort.body.id}/`, {}, `${secondId}\n`)).status).toBe(403);
    expect(await members(theirCohort.body.id)).toEqual([]);
  });

  it('refuses bad uploads with a 400 or 413 in the one JSON error shape', async () => {
    const refused = async (response: Promise<{ status: number; body: any }>, status: number, attr: string) => {
      const { status: got, body } = await response;
      expect({ got, attr: body?.attr, hasDetail: typeof body?.detail === 'string' }).toEqual({ got: status, attr, hasDetail: true });
    };
    await refused(upload('POST', cohorts(), { name: 'empty', is_static: 'true' }, ''), 400, 'csv');
    await refused(upload('POST', cohorts(), { name: 'no id column', is_static: 'true' }, 'name,plan\nAda,pro\n'), 400, 'csv');
    await refused(upload('POST', cohorts(), { name: 'dynamic', is_static: 'false' }, 'a\n'), 400, 'is_static');
    await refused(upload('POST', cohorts(), { is_static: 'true' }, 'a\n'), 400, 'name');
    await refused(upload('POST', cohorts(), { name: 'wrong field', is_static: 'true' }, 'a\n', 'file'), 400, 'file');
    await refused(upload('POST', cohorts(), { name: 'too big', is_static: 'true' }, 'x'.repeat(5 * 1024 * 1024 + 1)), 413, null as unknown as string);
    // Forms go to the cohort writes only: anywhere else a form is still the 415 it was.
    const form = new FormData();
    form.append('name', 'x');
    const elsewhere = await fetch(`${api.url}/api/projects/${tenant.project.id}/dashboards/`, { method: 'POST', headers: { authorization: `Bearer ${tenant.personalApiKey}` }, body: form });
    expect(elsewhere.status).toBe(415);
  });
});

describe("a static cohort's persons", () => {
  let cohortId: number;
  let uuids: string[];
  beforeAll(async () => {
    uuids = [];
    for (const name of ['p1', 'p2', 'p3']) uuids.push(await person(tenant, { email: `${name}@list.test` }, uniqueName(name)));
    cohortId = (await api.request('POST', cohorts(), tenant.personalApiKey, { name: 'Listed', is_static: true, distinct_ids: [] })).body.id;
    const added = await api.request('PATCH', `${cohorts()}${cohortId}/add_persons_to_static_cohort/`, tenant.personalApiKey, { person_ids: [...uuids, randomUUID()] });
    expect(added).toMatchObject({ status: 200, body: { success: true } });
  });

  it('lists them as the persons endpoint shows persons, paged', async () => {
    const page = await api.request('GET', `/api/environments/${tenant.project.id}/cohorts/${cohortId}/persons/?limit=2`, tenant.personalApiKey);
    expect(page.status).toBe(200);
    expect(page.body.results).toHaveLength(2);
    expect(page.body.next).toContain('offset=2');
    const shown = page.body.results[0];
    const asPerson = await api.request('GET', `/api/projects/${tenant.project.id}/persons/${shown.id}/`, tenant.personalApiKey);
    expect(shown).toEqual(asPerson.body);
    const rest = await api.request('GET', `${cohorts()}${cohortId}/persons/?limit=2&offset=2`, tenant.personalApiKey);
    expect(sorted([...page.body.results, ...rest.body.results].map((p: { uuid: string }) => p.uuid))).toEqual(sorted(uuids));
    expect(rest.body.next).toBeNull();
  });

  it('removes one by uuid; an unknown or foreign uuid is a 404, a malformed one a 400', async () => {
    const removed = await api.request('PATCH', `${cohorts()}${cohortId}/remove_person_from_static_cohort/`, tenant.personalApiKey, { person_id: uuids[0] });
    expect(removed).toMatchObject({ status: 200, body: { success: true } });
    expect(await members(cohortId)).toEqual(sorted(uuids.slice(1)));
    const foreign = await person(other, {}, uniqueName('foreign'));
    expect((await api.request('PATCH', `${cohorts()}${cohortId}/remove_person_from_static_cohort/`, tenant.personalApiKey, { person_id: foreign })).status).toBe(404);
    const malformed = await api.request('PATCH', `${cohorts()}${cohortId}/remove_person_from_static_cohort/`, tenant.personalApiKey, { person_id: 'x' });
    expect(malformed).toMatchObject({ status: 400, body: { attr: 'person_id' } });
  });

  it("adds no one from another project, refusing a list naming only them; add refuses a dynamic cohort and a bad body", async () => {
    const foreign = await person(other, {}, uniqueName('foreign'));
    const onlyTheirs = await api.request('PATCH', `${cohorts()}${cohortId}/add_persons_to_static_cohort/`, tenant.personalApiKey, { person_ids: [foreign] });
    expect(onlyTheirs.status).toBe(400);
    expect(await members(cohortId)).not.toContain(foreign);
    for (const body of [{}, { person_ids: [] }, { person_ids: ['nope'] }, { person_ids: 'x' }]) {
      expect((await api.request('PATCH', `${cohorts()}${cohortId}/add_persons_to_static_cohort/`, tenant.personalApiKey, body)).status).toBe(400);
    }
    const dynamic = await api.request('POST', cohorts(), tenant.personalApiKey, { name: 'dyn', filters: { properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] } } });
    expect((await api.request('PATCH', `${cohorts()}${dynamic.body.id}/add_persons_to_static_cohort/`, tenant.personalApiKey, { person_ids: [uuids[1]] })).status).toBe(400);
  });

  it("never lists or changes another project's cohort: 404 by id from this project", async () => {
    const theirCohort = (await api.request('POST', cohorts(other), other.personalApiKey, { name: 'theirs', is_static: true, distinct_ids: [] })).body.id;
    expect((await api.request('GET', `${cohorts()}${theirCohort}/persons/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('PATCH', `${cohorts()}${theirCohort}/add_persons_to_static_cohort/`, tenant.personalApiKey, { person_ids: [uuids[1]] })).status).toBe(404);
    expect(await members(theirCohort)).toEqual([]);
  });

  it('needs cohort:read and person:read to list, cohort:write to change', async () => {
    const cohortOnly = await createKey(api.pool, api.config, tenant.user.id, ['cohort:write']);
    expect((await api.request('GET', `${cohorts()}${cohortId}/persons/`, cohortOnly)).status).toBe(403);
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['cohort:read', 'person:read']);
    expect((await api.request('GET', `${cohorts()}${cohortId}/persons/`, reader)).status).toBe(200);
    expect((await api.request('PATCH', `${cohorts()}${cohortId}/add_persons_to_static_cohort/`, reader, { person_ids: [uuids[0]] })).status).toBe(403);
    expect((await upload('PATCH', `${cohorts()}${cohortId}/`, {}, 'x\n', 'csv', reader)).status).toBe(403);
  });
});

describe("a dynamic cohort's persons", () => {
  it('are those the flag engine puts in it now (nested AND/OR groups, negation, an empty AND), each as the persons endpoint shows it', async () => {
    const project = await createTestTenant(api.pool, api.config);
    const people = [
      { plan: 'pro', seats: 10, email: 'a@acme.test', country: 'FR' },
      { plan: 'pro', seats: 2, email: 'b@acme.test', country: 'DE' },
      { plan: 'pro', seats: '7', email: 'c@else.test' },
      { plan: 'free', email: 'd@ACME.test' },
      { plan: 'Pro', seats: 6, country: 'FR' },
      {},
    ];
    for (const properties of people) await person(project, properties, uniqueName('p'));
    const definitions = [
      {
        type: 'OR',
        values: [
          { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }, { key: 'seats', type: 'person', operator: 'gt', value: 5 }] },
          { type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme' }, { key: 'country', type: 'person', value: 'FR', negation: true }] },
        ],
      },
      { type: 'AND', values: [{ key: 'country', type: 'person', operator: 'is_not_set' }] },
      { type: 'AND', values: [] },
    ];
    const projectApi = (method: string, path: string, body?: unknown) => api.request(method, `/api/projects/${project.project.id}${path}`, project.personalApiKey, body);
    const everyone = (await projectApi('GET', '/persons/?limit=100')).body.results as { uuid: string }[];
    for (const properties of definitions) {
      const created = await projectApi('POST', '/cohorts/', { name: uniqueName('dyn'), filters: { properties } });
      expect(created.status).toBe(201);
      const listed = (await projectApi('GET', `/cohorts/${created.body.id}/persons/?limit=100`)).body.results as { uuid: string }[];
      // The reference: the flag engine, person by person, as /persons/cohorts/ asks it.
      const inIt: string[] = [];
      for (const { uuid } of everyone) {
        const of = (await projectApi('GET', `/persons/cohorts/?person_id=${uuid}`)).body.results as { id: number }[];
        if (of.some((c) => c.id === created.body.id)) inIt.push(uuid);
      }
      expect({ properties, members: sorted(listed.map((p) => p.uuid)) }).toEqual({ properties, members: sorted(inIt) });
      expect(listed.every((p) => everyone.some((e) => JSON.stringify(e) === JSON.stringify(p)))).toBe(true);
    }
  });
});

describe('membership from uploads and adds counts wherever cohorts do', () => {
  let read: ReadServices;
  beforeAll(async () => {
    read = await startReadServices({});
  });
  afterAll(() => read.close());

  it("drives a flag that targets the cohort, and the person's cohorts", async () => {
    const uploadedId = uniqueName('uploaded');
    const addedId = uniqueName('added');
    const uploaded = await person(tenant, {}, uploadedId);
    const added = await person(tenant, {}, addedId);
    const created = await upload('POST', cohorts(), { name: 'Flagged', is_static: 'true' }, `${uploadedId}\n`);
    const key = uniqueName('static-flag');
    const flag = await api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, {
      key,
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: created.body.id }], rollout_percentage: 100 }] },
    });
    expect(flag.status).toBe(201);
    const enabled = async (distinctId: string) => (await read.flags(tenant.project.api_token, distinctId)).featureFlags[key];
    await waitFor(async () => (await enabled(uploadedId)) === true && (await enabled(addedId)) === false, { timeoutMs: 10_000, what: 'the uploaded person in, the other out' });
    await api.request('PATCH', `${cohorts()}${created.body.id}/add_persons_to_static_cohort/`, tenant.personalApiKey, { person_ids: [added] });
    await waitFor(async () => (await enabled(addedId)) === true, { timeoutMs: 10_000, what: 'the added person in' });
    await api.request('PATCH', `${cohorts()}${created.body.id}/remove_person_from_static_cohort/`, tenant.personalApiKey, { person_id: added });
    await waitFor(async () => (await enabled(addedId)) === false, { timeoutMs: 10_000, what: 'the removed person out' });
    const ofPerson = await api.request('GET', `/api/projects/${tenant.project.id}/persons/cohorts/?person_id=${uploaded}`, tenant.personalApiKey);
    expect(ofPerson.body.results.map((c: { id: number }) => c.id)).toContain(created.body.id);
  });
});
