import { createKey, createTestTenant, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const surveysPath = (prefix: 'projects' | 'environments' = 'environments', own = tenant) => `/api/${prefix}/${own.project.id}/surveys/`;
const create = (body: Record<string, unknown>, key = tenant.personalApiKey) => api.request('POST', surveysPath(), key, body);
const patch = (id: string, body: Record<string, unknown>) => api.request('PATCH', `${surveysPath()}${id}/`, tenant.personalApiKey, body);
const flag = async (id: number) => (await api.request('GET', `/api/projects/${tenant.project.id}/feature_flags/${id}/`, tenant.personalApiKey)).body;
const survey = (extra: Record<string, unknown> = {}) => ({
  name: uniqueName('survey'),
  type: 'popover',
  questions: [{ type: 'open', question: 'What could be better?' }],
  ...extra,
});
const targeting = { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme.test' }], rollout_percentage: 100 }] };

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));

describe('surveys', () => {
  it("creates a survey in PostHog's shape, gives each question an id, and retrieves it under both prefixes", async () => {
    const questions = [
      { type: 'open', question: 'What could be better?' },
      { id: 'kept-id', type: 'single_choice', question: 'Which plan?', choices: ['Free', 'Paid'] },
      { type: 'rating', question: 'How likely are you to recommend us?', scale: 10, display: 'number', lowerBoundLabel: 'Unlikely' },
    ];
    const conditions = { url: 'checkout', urlMatchType: 'icontains', events: { values: [{ name: 'purchase' }] }, seenSurveyWaitPeriodInDays: 14 };
    const created = await create(survey({ name: 'NPS', description: 'internal note', questions, conditions, appearance: { backgroundColor: '#eeeded' } }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'NPS',
      description: 'internal note',
      type: 'popover',
      conditions,
      appearance: { backgroundColor: '#eeeded' },
      start_date: null,
      end_date: null,
      archived: false,
      linked_flag: null,
      linked_flag_id: null,
      targeting_flag: null,
      created_by: { id: tenant.user.id },
    });
    expect(created.body.questions).toEqual([
      { ...questions[0], id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      questions[1],
      { ...questions[2], id: expect.any(String) },
    ]);
    for (const prefix of ['projects', 'environments'] as const) {
      const { status, body } = await api.request('GET', `${surveysPath(prefix)}${created.body.id}/`, tenant.personalApiKey);
      expect(status).toBe(200);
      expect(body).toEqual(created.body);
    }
  });

  it('makes the internal targeting flag PostHog makes: nobody who answered or dismissed, active only while the survey runs', async () => {
    const created = await create(survey());
    const internal = created.body.internal_targeting_flag;
    expect(internal).toMatchObject({ key: expect.stringMatching(/^survey-targeting-[0-9a-f]{10}-custom$/), active: false });
    expect(internal.filters.groups[0].properties).toEqual([
      { key: `$survey_dismissed/${created.body.id}`, type: 'person', operator: 'is_not_set', value: 'is_not_set' },
      { key: `$survey_responded/${created.body.id}`, type: 'person', operator: 'is_not_set', value: 'is_not_set' },
    ]);
    expect(created.body.feature_flag_keys).toContainEqual({ key: 'internal_targeting_flag_key', value: internal.key });

    const launched = await patch(created.body.id, { start_date: '2024-05-01T10:00:00Z' });
    expect(launched.status).toBe(200);
    expect(launched.body).toMatchObject({ start_date: '2024-05-01T10:00:00.000Z', internal_targeting_flag: { id: internal.id, active: true } });
    const stopped = await patch(created.body.id, { end_date: '2024-06-01T00:00:00Z' });
    expect(stopped.body.internal_targeting_flag).toMatchObject({ id: internal.id, active: false });
  });

  it('keeps targeting_flag_filters in a targeting flag of its own, in step with the survey, and deletes it on remove_targeting_flag', async () => {
    const created = await create(survey({ targeting_flag_filters: targeting, start_date: '2024-05-01T10:00:00Z' }));
    expect(created.status).toBe(201);
    const made = created.body.targeting_flag;
    expect(made).toMatchObject({ key: expect.stringMatching(/^survey-targeting-[0-9a-f]{10}$/), filters: targeting, active: true });
    expect(created.body.internal_targeting_flag.active).toBe(true);

    const narrower = { groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['paid'] }], rollout_percentage: 50 }] };
    const changed = await patch(created.body.id, { targeting_flag_filters: narrower });
    expect(changed.body.targeting_flag).toMatchObject({ id: made.id, filters: narrower, active: true });
    expect((await patch(created.body.id, { end_date: '2024-06-01T00:00:00Z' })).body.targeting_flag).toMatchObject({ id: made.id, active: false });

    const removed = await patch(created.body.id, { remove_targeting_flag: true });
    expect(removed.body.targeting_flag).toBeNull();
    expect((await api.request('GET', `/api/projects/${tenant.project.id}/feature_flags/${made.id}/`, tenant.personalApiKey)).status).toBe(404);
  });

  it('links a flag of the project, and takes a targeting flag the user chose without changing it', async () => {
    const multivariate = { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } };
    const linked = await api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, { key: uniqueName('linked'), filters: multivariate });
    const chosen = await api.request('POST', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey, { key: uniqueName('chosen') });
    const created = await create(survey({ linked_flag_id: linked.body.id, targeting_flag_id: chosen.body.id, conditions: { linkedFlagVariant: 'b' } }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ linked_flag_id: linked.body.id, linked_flag: { key: linked.body.key }, targeting_flag: { id: chosen.body.id } });
    await patch(created.body.id, { start_date: '2024-05-01T10:00:00Z' });
    expect(await flag(chosen.body.id)).toMatchObject({ active: true, version: 1 });
    // New filters go to a flag the survey makes; the chosen one is only unlinked.
    const replaced = await patch(created.body.id, { targeting_flag_filters: targeting });
    expect(replaced.body.targeting_flag).toMatchObject({ key: expect.stringMatching(/^survey-targeting-/), filters: targeting });
    expect(await flag(chosen.body.id)).toMatchObject({ deleted: false, version: 1 });
  });

  it('lists surveys as {count, next, previous, results}', async () => {
    const own = await createTestTenant(api.pool, api.config);
    for (const name of ['first', 'second', 'third']) expect((await api.request('POST', surveysPath('projects', own), own.personalApiKey, survey({ name }))).status).toBe(201);
    const page = await api.request('GET', `${surveysPath('environments', own)}?limit=2`, own.personalApiKey);
    expect(page.body).toMatchObject({ count: 3, previous: null });
    expect(page.body.results.map((s: { name: string }) => s.name)).toEqual(['third', 'second']);
    expect(new URL(page.body.next).searchParams.get('offset')).toBe('2');
  });

  it('deletes a survey with the flags it made, and answers 404 after', async () => {
    const created = await create(survey({ targeting_flag_filters: targeting }));
    const path = `${surveysPath()}${created.body.id}/`;
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', path, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(404);
    for (const made of [created.body.targeting_flag, created.body.internal_targeting_flag]) {
      expect((await api.request('GET', `/api/projects/${tenant.project.id}/feature_flags/${made.id}/`, tenant.personalApiKey)).status).toBe(404);
    }
  });
});

describe('survey validation', () => {
  it('answers 400 naming the field for each malformed request', async () => {
    const otherProject = await createTestTenant(api.pool, api.config);
    const foreign = await api.request('POST', `/api/projects/${otherProject.project.id}/feature_flags/`, otherProject.personalApiKey, { key: 'foreign' });
    const taken = (await create(survey())).body.name;
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'popover' }, 'name'],
      [{ name: uniqueName('s') }, 'type'],
      [survey({ type: 'banner' }), 'type'],
      [survey({ questions: [{ type: 'open' }] }), 'questions[0].question'],
      [survey({ questions: [{ type: 'essay', question: 'Why?' }] }), 'questions[0].type'],
      [survey({ questions: [{ type: 'multiple_choice', question: 'Which?' }] }), 'questions[0].choices'],
      [survey({ questions: [{ type: 'link', question: 'Read', link: 'javascript:alert(1)' }] }), 'questions[0].link'],
      [survey({ start_date: 'next tuesday' }), 'start_date'],
      [survey({ start_date: '2024-13-45T00:00:00Z' }), 'start_date'],
      [survey({ conditions: { seenSurveyWaitPeriodInDays: -1 } }), 'conditions.seenSurveyWaitPeriodInDays'],
      [survey({ linked_flag_id: foreign.body.id }), 'linked_flag_id'],
      [survey({ conditions: { linkedFlagVariant: 'b' } }), 'conditions.linkedFlagVariant'],
      [survey({ targeting_flag_id: 999_999_999 }), 'targeting_flag_id'],
      [survey({ targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }), 'targeting_flag_filters'],
      [survey({ targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 150 }] } }), 'targeting_flag_filters.groups[0].rollout_percentage'],
      [survey({ name: taken }), 'name'],
    ];
    for (const [body, attr] of cases) {
      const response = await create(body);
      expect({ body, status: response.status, attr: response.body.attr }).toEqual({ body, status: 400, attr });
    }
  });

  it('refuses a rename to a taken name on PATCH, leaving both surveys as they were', async () => {
    const [a, b] = [await create(survey()), await create(survey())];
    const response = await patch(b.body.id, { name: a.body.name });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ attr: 'name', code: 'unique' });
    expect((await api.request('GET', `${surveysPath()}${b.body.id}/`, tenant.personalApiKey)).body.name).toBe(b.body.name);
  });
});

describe('access to the survey endpoints', () => {
  it('lets survey:read list and retrieve but not write, naming the missing scope', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['survey:read']);
    const created = await create(survey());
    expect((await api.request('GET', surveysPath(), reader)).status).toBe(200);
    expect((await api.request('GET', `${surveysPath()}${created.body.id}/`, reader)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', surveysPath(), survey()],
      ['PATCH', `${surveysPath()}${created.body.id}/`, { name: 'nope' }],
      ['DELETE', `${surveysPath()}${created.body.id}/`, undefined],
    ] as const) {
      const response = await api.request(method, path, reader, body);
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ code: 'missing_scope', detail: expect.stringMatching(/'survey:write'/) });
    }
    const other = await createKey(api.pool, api.config, tenant.user.id, ['feature_flag:write']);
    const refused = await api.request('GET', surveysPath(), other);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/'survey:read'/);
  });

  it("answers 404 for another project's survey or an id that is not one", async () => {
    const created = await create(survey());
    const other = await createTestTenant(api.pool, api.config);
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const response = await api.request(method, `${surveysPath('environments', other)}${created.body.id}/`, other.personalApiKey, method === 'PATCH' ? { name: 'stolen' } : undefined);
      expect({ method, status: response.status }).toEqual({ method, status: 404 });
    }
    expect((await api.request('GET', `${surveysPath()}not-a-uuid/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', surveysPath(), other.personalApiKey)).status).toBe(403);
    expect((await api.request('GET', `${surveysPath()}${created.body.id}/`, tenant.personalApiKey)).body.name).toBe(created.body.name);
  });
});
