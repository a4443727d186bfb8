import { randomUUID } from 'node:crypto';
import { EVENT_ROW_COLUMNS, eventRow, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

/**
 * PostHog's `personsOnEventsMode` modifier, on a project (PATCH /api/projects/:id/) and on a query:
 * `person_id_override_properties_joined` takes the person ingest stored on each event, overridden
 * for the distinct ids that moved since, and gives the answers the identity tables' join gives.
 */
let api: ApiHarness;
let tenant: TestTenant;

const setup = useApi();
const ALICE = randomUUID();
const BOB = randomUUID();
const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  ({ api, tenant } = setup);
  const team = tenant.project.id;
  const at = (hour: number) => `${DAY} ${String(hour).padStart(2, '0')}:00:00`;
  // bob-laptop's events carry bob, whom it left for alice (version 1); the others never moved.
  const events = [
    eventRow(team, 'alice', '$pageview', at(1), {}, { person_id: ALICE }),
    eventRow(team, 'bob', '$pageview', at(2), {}, { person_id: BOB }),
    eventRow(team, 'bob-laptop', '$pageview', at(3), {}, { person_id: BOB }),
    eventRow(team, 'bob-laptop', 'purchase', at(4), {}, { person_id: BOB }),
  ];
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, events);
  const pdi = (distinct_id: string, person_id: string, version: number) => ({ team_id: team, distinct_id, person_id, is_deleted: 0, version });
  const rows = [pdi('alice', ALICE, 0), pdi('bob', BOB, 0), pdi('bob-laptop', BOB, 0), pdi('bob-laptop', ALICE, 1)];
  await api.clickhouse.insert('person_distinct_id', ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version'], rows);
});

const project = () => `/api/projects/${tenant.project.id}/`;
const patch = (body: object) => api.request('PATCH', project(), tenant.personalApiKey, body);
const query = (body: object) => api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { refresh: 'force_blocking', ...body });
const PERSONS = 'SELECT person_id, count() AS n FROM events GROUP BY person_id ORDER BY n DESC';
const OVERRIDES_ONLY = 'squashed_distinct_ids';

describe("a project's persons-on-events mode", () => {
  it('is unset until PATCHed, shows the default beside it, and takes only the modes there are', async () => {
    expect((await api.request('GET', project(), tenant.personalApiKey)).body).toMatchObject({ modifiers: {}, default_modifiers: { personsOnEventsMode: 'disabled' } });
    for (const modifiers of [{ personsOnEventsMode: 'person_id_no_override_properties_on_events' }, { personsOnEventsMode: 1 }, { inCohortVia: 'subquery' }]) {
      const { status, body } = await patch({ modifiers });
      expect(status).toBe(400);
      expect(body).toMatchObject({ type: 'invalid_request', attr: expect.stringMatching(/^modifiers/) });
    }
    expect((await api.request('GET', project(), tenant.personalApiKey)).body.modifiers).toEqual({});
  });

  it("gives the identity tables' answers, reading only the ids that moved; a query's own mode comes first", async () => {
    const joined = await query({ query: { kind: 'HogQLQuery', query: PERSONS } });
    expect(joined.status).toBe(200);
    expect(joined.body.results).toEqual([[ALICE, 3], [BOB, 1]]);
    expect(joined.body.clickhouse).not.toContain(OVERRIDES_ONLY);

    expect(await patch({ modifiers: { personsOnEventsMode: 'person_id_override_properties_joined' } })).toMatchObject({ status: 200, body: { modifiers: { personsOnEventsMode: 'person_id_override_properties_joined' } } });
    const onEvents = await query({ query: { kind: 'HogQLQuery', query: PERSONS } });
    expect(onEvents.body.results).toEqual(joined.body.results);
    expect(onEvents.body.clickhouse).toContain(OVERRIDES_ONLY);

    const own = await query({ query: { kind: 'HogQLQuery', query: PERSONS, modifiers: { personsOnEventsMode: 'disabled' } } });
    expect(own.body.results).toEqual(joined.body.results);
    expect(own.body.clickhouse).not.toContain(OVERRIDES_ONLY);
    expect(await patch({ modifiers: {} })).toMatchObject({ status: 200, body: { modifiers: {} } });
  });

  it('counts the same persons in an insight, and caches each mode apart', async () => {
    const trends = (personsOnEventsMode?: string, refresh = 'force_blocking') =>
      query({ refresh, query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], dateRange: { date_from: '-7d' }, ...(personsOnEventsMode && { modifiers: { personsOnEventsMode } }) } });
    const total = (answer: { body: { results: { count: number }[] } }) => answer.body.results[0]!.count;
    const joined = await trends();
    // alice, and bob-laptop's pageview counted as alice's; bob alone.
    expect(total(joined)).toBe(2);
    const cached = await trends('person_id_override_properties_joined', 'force_cache');
    expect(cached.body).toMatchObject({ results: null, is_cached: false });
    expect(total(await trends('person_id_override_properties_joined'))).toBe(2);
  });

  it('refuses a query naming a mode there is not, naming the field', async () => {
    const { status, body } = await query({ query: { kind: 'HogQLQuery', query: PERSONS, modifiers: { personsOnEventsMode: 'on' } } });
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'invalid_request', detail: expect.stringContaining('personsOnEventsMode') });
  });
});
