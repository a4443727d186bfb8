import { randomUUID } from 'node:crypto';
import { createKey, createTestTenant, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
const uuids: string[] = [];

function row(i: number, overrides: Record<string, unknown> = {}) {
  const uuid = randomUUID();
  uuids.push(uuid);
  const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
  return {
    uuid,
    event: i % 2 ? 'clicked' : '$pageview',
    properties: JSON.stringify({ n: i, $browser: i % 3 ? 'Chrome' : 'Firefox', path: `/p/${i}` }),
    timestamp: ts.toISOString().slice(0, 19).replace('T', ' '),
    timestamp_ms: 250,
    team_id: tenant.project.id,
    distinct_id: `user-${i % 4}`,
    elements_chain: '',
    created_at: '2026-01-01 00:00:00',
    person_id: '00000000-0000-0000-0000-000000000000',
    person_properties: JSON.stringify({ email: `u${i % 4}@example.com` }),
    person_created_at: '2026-01-01 00:00:00',
    group_0: '',
    group_1: '',
    group_2: '',
    group_3: '',
    group_4: '',
    inserted_at: '2026-01-01 00:00:00',
    ...overrides,
  };
}

const COLUMNS = [
  'uuid', 'event', 'properties', 'timestamp', 'timestamp_ms', 'team_id', 'distinct_id', 'elements_chain', 'created_at', 'person_id',
  'person_properties', 'person_created_at', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4', 'inserted_at',
] as const;
const list = (query = '', key: string | null = tenant.personalApiKey) => api.request('GET', `/api/environments/${tenant.project.id}/events/${query}`, key);
const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));
beforeAll(async () => {
  const rows = Array.from({ length: 10 }, (_, i) => row(i));
  await api.clickhouse.insert('events', COLUMNS, rows);
  // A replayed copy of the newest event: the API must still show it once.
  await api.clickhouse.insert('events', COLUMNS, [rows[9]!]);
});

describe('GET /events/', () => {
  it('lists newest first with every stored-event field, showing a replayed event once', async () => {
    const { status, body } = await list();
    expect(status).toBe(200);
    expect(body.results).toHaveLength(10);
    expect(body.results[0].id).toBe(uuids[9]);
    expect(body.results[0].timestamp).toBe('2026-01-01T00:00:09.250Z');
    expect(body.next).toBeNull();
  });

  it('pages with limit and offset, next carrying both, absent on the last page', async () => {
    const first = await list('?limit=4');
    expect(first.body.results.map((e: { id: string }) => e.id)).toEqual([uuids[9], uuids[8], uuids[7], uuids[6]]);
    const next = new URL(first.body.next);
    expect(next.searchParams.get('limit')).toBe('4');
    expect(next.searchParams.get('offset')).toBe('4');
    const last = await list('?limit=4&offset=8');
    expect(last.body.results).toHaveLength(2);
    expect(last.body.next).toBeNull();
  });

  it('filters by event name and distinct id', async () => {
    const { body } = await list(q({ event: 'clicked', distinct_id: 'user-1' }));
    expect(body.results.map((e: { properties: string }) => JSON.parse(e.properties).n)).toEqual([9, 5, 1]);
  });

  it('filters by after and before, in ISO 8601 and relative forms', async () => {
    const { body } = await list(q({ after: '2026-01-01T00:00:03Z', before: '2026-01-01T00:00:06Z' }));
    expect(body.results.map((e: { properties: string }) => JSON.parse(e.properties).n)).toEqual([5, 4]);
    expect((await list(q({ after: '-7d' }))).body.results).toHaveLength(0);
    expect((await list(q({ before: '-1d' }))).body.results).toHaveLength(10);
  });

  it('rejects an unparsable date, naming the parameter', async () => {
    const { status, body } = await list(q({ after: 'last tuesday' }));
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'invalid_request', attr: 'after' });
  });

  it('filters by person_id through the person distinct ids', async () => {
    const person = await api.pool.query<{ id: number }>(
      `INSERT INTO persons (uuid, team_id, properties, created_at) VALUES ($1, $2, '{}', now()) RETURNING id`,
      [randomUUID(), tenant.project.id],
    );
    const personId = person.rows[0]!.id;
    await api.pool.query(`INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'user-2', $2), ($1, 'user-3', $2)`, [tenant.project.id, personId]);
    const { body } = await list(q({ person_id: String(personId) }));
    expect(body.results.map((e: { distinct_id: string }) => e.distinct_id).sort()).toEqual(['user-2', 'user-2', 'user-3', 'user-3']);
  });

  it('filters by event and person properties with the flag operators', async () => {
    const byBrowser = await list(q({ properties: JSON.stringify([{ key: '$browser', value: 'firefox', operator: 'exact' }]) }));
    expect(byBrowser.body.results.map((e: { properties: string }) => JSON.parse(e.properties).n)).toEqual([9, 6, 3, 0]);
    const numeric = await list(q({ properties: JSON.stringify([{ key: 'n', value: 7, operator: 'gt' }, { key: 'email', value: 'u0@', operator: 'icontains', type: 'person' }]) }));
    expect(numeric.body.results.map((e: { properties: string }) => JSON.parse(e.properties).n)).toEqual([8]);
  });

  it('rejects malformed property filters with a 400 naming the problem', async () => {
    expect((await list(q({ properties: 'not json' }))).body).toMatchObject({ attr: 'properties', detail: expect.stringMatching(/JSON/) });
    expect((await list(q({ properties: JSON.stringify([{ key: 'a', operator: 'between', value: 1 }]) }))).body.detail).toMatch(/unknown operator "between"/);
    expect((await list(q({ properties: JSON.stringify([{ value: 1 }]) }))).status).toBe(400);
  });

  it('filters by a cohort using any operator cohorts accept, is_date_exact included, instead of failing', async () => {
    const filters = { properties: { type: 'AND', values: [{ key: 'signed_up', type: 'person', operator: 'is_date_exact', value: '2026-01-01' }] } };
    const cohort = await api.request('POST', `/api/environments/${tenant.project.id}/cohorts/`, tenant.personalApiKey, { name: 'signed up on new year', filters });
    expect(cohort.status).toBe(201);
    const { status, body } = await list(q({ properties: JSON.stringify([{ key: 'id', type: 'cohort', value: cohort.body.id }]) }));
    expect(status).toBe(200);
    expect(body.results).toEqual([]);
  });

  it('answers a method the path does not take with 405 and Allow', async () => {
    const { status, headers, body } = await api.request('PUT', `/api/environments/${tenant.project.id}/events/`, tenant.personalApiKey);
    expect(status).toBe(405);
    expect(headers.get('allow')).toBe('GET, HEAD');
    expect(body).toMatchObject({ type: 'invalid_request', code: 'method_not_allowed' });
  });

  it('applies where expressions and returns select expressions as columns', async () => {
    // HogQL reads a property as text, as PostHog does: arithmetic converts it first; a comparison with a number converts it itself.
    const { status, body } = await list(q({ select: JSON.stringify(['event', 'toFloat(properties.n) * 2', "concat(distinct_id, '!')"]), where: JSON.stringify(['properties.n >= 8']) }));
    expect(status).toBe(200);
    expect(body.columns).toEqual(['event', 'toFloat(properties.n) * 2', "concat(distinct_id, '!')"]);
    expect(body.results).toEqual([
      ['clicked', 18, 'user-1!'],
      ['$pageview', 16, 'user-0!'],
    ]);
  });

  it('where and select are HogQL expressions: its operators and functions work', async () => {
    const n = (body: { results: { properties: string }[] }) => body.results.map((e) => JSON.parse(e.properties).n);
    const matched = await list(q({ where: JSON.stringify(["properties.$browser =~ '^Chr'", 'toInt(properties.n) > 5']) }));
    expect(matched.status).toBe(200);
    expect(n(matched.body)).toEqual([8, 7]);
    // person.properties reads the person's properties as the event stored them.
    const byPerson = await list(q({ where: JSON.stringify(["person.properties.email == 'u0@example.com'"]) }));
    expect(n(byPerson.body)).toEqual([8, 4, 0]);
  });

  it('answers functions, fields and aggregations the events list does not take with a 400 naming them', async () => {
    const fn = await list(q({ select: JSON.stringify(["file('/etc/passwd')"]) }));
    expect(fn.status).toBe(400);
    expect(fn.body.detail).toMatch(/Unsupported function call 'file\(\.\.\.\)'/);
    const column = await list(q({ where: JSON.stringify(['team_id = 1']) }));
    expect(column.body.detail).toMatch(/Unable to resolve field: team_id/);
    const aggregate = await list(q({ select: JSON.stringify(['count()']) }));
    expect(aggregate.body).toMatchObject({ code: 'invalid_query', attr: 'select', detail: expect.stringMatching(/Aggregations such as count\(\) are not available/) });
    // `*` (bare, qualified, quoted or inside a call) stands for nothing in one column or one condition.
    for (const [attr, source] of [['select', '`events`.*'], ['select', 'events.*'], ['select', '*'], ['where', '*'], ['where', 'isNotNull(*)'], ['select', 'tuple(events.*)']]) {
      const { status, body } = await list(q({ [attr!]: JSON.stringify([source]) }));
      expect({ source, status, body }).toEqual({ source, status: 400, body: expect.objectContaining({ code: 'invalid_query', attr, detail: expect.stringMatching(/\* is not available in the events list|Syntax error/) }) });
    }
  });

  it('reads person.properties in where and select as the event recorded them, and refuses person fields that need the person join', async () => {
    const { status, body } = await list(q({ select: JSON.stringify(['person.properties.email', 'poe.properties.email']), where: JSON.stringify(["person.properties.email = 'u1@example.com'"]) }));
    expect(status).toBe(200);
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results).toEqual(body.results.map(() => ['u1@example.com', 'u1@example.com']));
    const joined = await list(q({ where: JSON.stringify(["person.id = 'x'"]) }));
    expect(joined.body).toMatchObject({ code: 'invalid_query', attr: 'where', detail: expect.stringMatching(/person fields are not available here/) });
  });

  it('answers an unknown function in where with a 400 naming it', async () => {
    const { status, body } = await list(q({ where: JSON.stringify(['frobnicate(event) = 1']) }));
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'invalid_request', code: 'invalid_query', attr: 'where', detail: expect.stringMatching(/^Query parameter where: Unsupported function call 'frobnicate\(\.\.\.\)'/) });
  });

  it('keeps injection attempts away from ClickHouse', async () => {
    for (const attempt of ["1 = 1) OR (1 = 1", "event = '' OR 1=1; DROP TABLE events --", "event = 'x\\' OR team_id != 0 --'"]) {
      const { status, body } = await list(q({ where: JSON.stringify([attempt]) }));
      if (status === 200) expect(body.results).toHaveLength(0);
      else expect(status).toBe(400);
    }
    const properties = await list(q({ properties: JSON.stringify([{ key: "x') OR 1=1 --", value: "' OR ''='" }]) }));
    expect(properties.status).toBe(200);
    expect(properties.body.results).toHaveLength(0);
    expect((await list()).body.results).toHaveLength(10);
  });

  it('returns CSV with a header row for format=csv', async () => {
    const { status, headers, text } = await list('?format=csv&limit=2');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/text\/csv/);
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe('id,distinct_id,properties,event,timestamp,person,elements,elements_chain');
    expect(lines).toHaveLength(3);
  });
});

describe('GET /events/:id/ and /events/values/', () => {
  it('retrieves one event by uuid', async () => {
    const { status, body } = await api.request('GET', `/api/environments/${tenant.project.id}/events/${uuids[3]}/`, tenant.personalApiKey);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: uuids[3], event: 'clicked', distinct_id: 'user-3' });
  });

  it('answers 404 for an event that does not exist', async () => {
    const { status, body } = await api.request('GET', `/api/environments/${tenant.project.id}/events/${randomUUID()}/`, tenant.personalApiKey);
    expect(status).toBe(404);
    expect(body.code).toBe('not_found');
  });

  it('lists the distinct values of a property, filtered by a fragment', async () => {
    const all = await api.request('GET', `/api/environments/${tenant.project.id}/events/values/?key=$browser`, tenant.personalApiKey);
    expect(all.body).toEqual([{ name: 'Chrome' }, { name: 'Firefox' }]);
    const some = await api.request('GET', `/api/environments/${tenant.project.id}/events/values/?key=$browser&value=fire`, tenant.personalApiKey);
    expect(some.body).toEqual([{ name: 'Firefox' }]);
    expect((await api.request('GET', `/api/environments/${tenant.project.id}/events/values/`, tenant.personalApiKey)).status).toBe(400);
  });
});

describe('access to the events endpoints', () => {
  it('refuses a key without query:read with a 403 naming the scope', async () => {
    const key = await createKey(api.pool, api.config, tenant.user.id, ['person:read']);
    const { status, body } = await list('', key);
    expect(status).toBe(403);
    expect(body.detail).toMatch(/'query:read'/);
  });

  it('refuses a project the key is not limited to, and a project of another organization', async () => {
    const limited = await createKey(api.pool, api.config, tenant.user.id, ['*'], [tenant.project.id + 100000]);
    expect((await list('', limited)).status).toBe(403);
    const other = await createTestTenant(api.pool, api.config);
    expect((await list('', other.personalApiKey)).status).toBe(403);
  });

  it('answers 404 for a project id that does not exist', async () => {
    const { status } = await api.request('GET', '/api/environments/999999999/events/', tenant.personalApiKey);
    expect(status).toBe(404);
  });
});

describe('pages across look-back windows', () => {
  let other: TestTenant;
  beforeAll(async () => {
    other = await createTestTenant(api.pool, api.config);
    const newer = await createTestTenant(api.pool, api.config);
    const at = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const hoursAgo = [1, 48, 24 * 20, 24 * 200, 24 * 800];
    const rows = hoursAgo.map((hours, i) => row(100 + i, { team_id: other.project.id, timestamp: at(hours), event: `age-${hours}` }));
    // Another project's events, newer than all of these: they must neither show nor fill a page.
    const theirs = Array.from({ length: 5 }, (_, i) => row(200 + i, { team_id: newer.project.id, timestamp: at(0.5), event: 'theirs' }));
    await api.clickhouse.insert('events', COLUMNS, [...rows, ...theirs]);
    await api.clickhouse.insert('events', COLUMNS, [rows[1]!]);
  });
  const page = async (query: string) => (await api.request('GET', `/api/environments/${other.project.id}/events/${query}`, other.personalApiKey)).body as { next: string | null; results: ({ event: string } | string[])[] };

  it('orders and pages events from the last hour to years ago as one list', async () => {
    const pages = [await page('?limit=2&offset=0'), await page('?limit=2&offset=2'), await page('?limit=2&offset=4')];
    expect(pages.map((p) => p.results.map((e) => (e as { event: string }).event))).toEqual([
      ['age-1', 'age-48'],
      ['age-480', 'age-4800'],
      ['age-19200'],
    ]);
    expect(pages.map((p) => p.next === null)).toEqual([false, false, true]);
  });

  it('pages select expressions the same way, with where and after bounds', async () => {
    const select = (params: Record<string, string>) => page(q({ select: JSON.stringify(['event']), ...params }));
    const pages = [await select({ limit: '1' }), await select({ limit: '1', offset: '1' }), await select({ limit: '3', offset: '2' })];
    expect(pages.map((p) => p.results.flat())).toEqual([['age-1'], ['age-48'], ['age-480', 'age-4800', 'age-19200']]);
    expect(pages.map((p) => p.next === null)).toEqual([false, false, true]);
    expect((await select({ where: JSON.stringify(["event != 'age-1'"]), after: '-300d', limit: '2' })).results.flat()).toEqual(['age-48', 'age-480']);
  });
});

describe('stored event fields', () => {
  let other: TestTenant;
  const get = (id: string) => api.request('GET', `/api/environments/${other.project.id}/events/${id}/`, other.personalApiKey);
  const listOther = (query: string) => api.request('GET', `/api/environments/${other.project.id}/events/${query}`, other.personalApiKey);
  beforeAll(async () => {
    other = await createTestTenant(api.pool, api.config);
  });

  it('elements are the elements_chain read as PostHog reads it, innermost first', async () => {
    const chain = 'button.btn.primary:attr__data-attr="save"attr_id="save"nth-child="2"nth-of-type="1"text="Save";form:nth-child="1"nth-of-type="1"';
    const autocapture = row(200, { team_id: other.project.id, event: '$autocapture', elements_chain: chain });
    const plain = row(201, { team_id: other.project.id });
    await api.clickhouse.insert('events', COLUMNS, [autocapture, plain]);
    const { body } = await get(autocapture.uuid);
    expect(body.elements_chain).toBe(chain);
    expect(JSON.parse(body.elements)).toEqual([
      { text: 'Save', tag_name: 'button', attr_class: ['btn', 'primary'], href: null, attr_id: 'save', nth_child: 2, nth_of_type: 1, attributes: { 'attr__data-attr': 'save' }, order: 0 },
      { text: null, tag_name: 'form', attr_class: null, href: null, attr_id: null, nth_child: 1, nth_of_type: 1, attributes: {}, order: 1 },
    ]);
    expect(JSON.parse((await get(plain.uuid)).body.elements)).toEqual([]);
  });

  it('person is the distinct id’s current person: a pageview sent before identify names the merged person', async () => {
    // The pageview's row recorded the anonymous person; identify merged it into the user's since.
    const anonymousPerson = randomUUID();
    const merged = randomUUID();
    const pageview = row(202, { team_id: other.project.id, distinct_id: 'anon-1', person_id: anonymousPerson, person_properties: '{"$browser":"Chrome"}' });
    const personless = row(203, { team_id: other.project.id, distinct_id: 'personless-1', person_id: randomUUID(), person_properties: '{}' });
    await api.clickhouse.insert('events', COLUMNS, [pageview, personless]);
    const person = await api.pool.query<{ id: number }>(
      `INSERT INTO persons (uuid, team_id, properties, is_identified, created_at) VALUES ($1, $2, $3, true, now()) RETURNING id`,
      [merged, other.project.id, { email: 'ann@example.com', $browser: 'Chrome' }],
    );
    await api.pool.query(`INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'ann', $2), ($1, 'anon-1', $2)`, [other.project.id, person.rows[0]!.id]);

    const shown = JSON.parse((await get(pageview.uuid)).body.person);
    expect(shown).toEqual({ id: merged, distinct_ids: ['anon-1'], properties: { email: 'ann@example.com', $browser: 'Chrome' } });
    const byPerson = await listOther(q({ person_id: String(person.rows[0]!.id) }));
    expect(byPerson.body.results.map((e: { id: string; person: string }) => [e.id, JSON.parse(e.person).id])).toEqual([[pageview.uuid, merged]]);
    // A distinct id without a person (a personless event's) shows the person recorded on the row.
    expect(JSON.parse((await get(personless.uuid)).body.person)).toMatchObject({ id: personless.person_id, properties: {} });
  });

  it('$screen events, the mobile page view, are listed with their $screen_name and filter by it', async () => {
    const home = row(204, { team_id: other.project.id, event: '$screen', properties: JSON.stringify({ $screen_name: 'Home', $lib: 'posthog-ios' }) });
    const settings = row(205, { team_id: other.project.id, event: '$screen', properties: JSON.stringify({ $screen_name: 'Settings', $lib: 'posthog-ios' }) });
    await api.clickhouse.insert('events', COLUMNS, [home, settings]);
    const screens = await listOther(q({ event: '$screen' }));
    expect(screens.body.results.map((e: { properties: string }) => JSON.parse(e.properties).$screen_name)).toEqual(['Settings', 'Home']);
    const named = await listOther(q({ event: '$screen', properties: JSON.stringify([{ key: '$screen_name', value: 'Home', operator: 'exact', type: 'event' }]) }));
    expect(named.body.results.map((e: { id: string }) => e.id)).toEqual([home.uuid]);
  });
});
