import { randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, createTestTenant, eventRow, replicasHold, uniqueName, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

/**
 * Behavioural cohorts through the API, in PostHog's cohort filter shapes: refused with a 400
 * naming the field when malformed, and used as cohorts are (their persons, HogQL's IN COHORT, the
 * events list, insights' property filters), each only in its project. A second project has the
 * same event names and distinct ids, all of whose events would make members: none may show.
 */
let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const cohortsPath = (who: TestTenant) => `/api/projects/${who.project.id}/cohorts/`;
const create = (body: Record<string, unknown>, who: TestTenant = tenant) => api.request('POST', cohortsPath(who), who.personalApiKey, body);
const patch = (id: number, body: Record<string, unknown>) => api.request('PATCH', `${cohortsPath(tenant)}${id}/`, tenant.personalApiKey, body);
const hogql = (query: string, who: TestTenant = tenant) => api.request('POST', `/api/environments/${who.project.id}/query/`, who.personalApiKey, { query: { kind: 'HogQLQuery', query } });

const group = (...values: unknown[]) => ({ properties: { type: 'AND', values } });
const purchased = (rest: Record<string, unknown> = {}) => ({ type: 'behavioral', key: 'purchase', event_type: 'events', value: 'performed_event', time_value: 30, time_interval: 'day', ...rest });
const inCohort = (id: number, rest: Record<string, unknown> = {}) => ({ key: 'id', type: 'cohort', value: id, ...rest });

const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().replace('T', ' ').slice(0, 19);
const PERSON = { ann: randomUUID(), ben: randomUUID(), cat: randomUUID() };

/** A person in Postgres (where the API shows persons from) and in ClickHouse (where cohorts are computed), with the same uuid. */
async function person(teamId: number, uuid: string, distinctIds: string[]): Promise<void> {
  const { rows } = await api.pool.query<{ id: number }>("INSERT INTO persons (uuid, team_id, properties, created_at) VALUES ($1, $2, '{}', now()) RETURNING id", [uuid, teamId]);
  for (const distinctId of distinctIds) await api.pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [teamId, distinctId, rows[0]!.id]);
  await api.clickhouse.insert('person', PERSON_COLUMNS, [{ id: uuid, created_at: ago(100), team_id: teamId, properties: '{}', is_identified: 1, is_deleted: 0, version: 1 }]);
  await api.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, distinctIds.map((distinct_id) => ({ team_id: teamId, distinct_id, person_id: uuid, is_deleted: 0, version: 1 })));
}

let buyers: number;

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  const [own, theirs] = [tenant.project.id, other.project.id];
  await person(own, PERSON.ann, ['ann', 'ann-phone']);
  await person(own, PERSON.ben, ['ben']);
  await person(own, PERSON.cat, ['cat']);
  const theirPerson = randomUUID();
  await person(theirs, theirPerson, ['ben', 'cat']);
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
    // ann bought in the last 30 days (from her phone too); ben 40 days ago; cat only looked.
    eventRow(own, 'ann', 'purchase', ago(2), { amount: 5 }),
    eventRow(own, 'ann-phone', 'purchase', ago(3), { amount: 7 }),
    eventRow(own, 'ben', 'purchase', ago(40), { amount: 9 }),
    eventRow(own, 'cat', '$pageview', ago(1)),
    // The other project's ben and cat bought yesterday.
    eventRow(theirs, 'ben', 'purchase', ago(1), { amount: 999 }),
    eventRow(theirs, 'cat', 'purchase', ago(1), { amount: 999 }),
  ]);
  await replicasHold(api.clickhouse, api.config, [own, theirs]);
  const created = await create({ name: uniqueName('buyers'), filters: group(purchased()) });
  expect(created.status).toBe(201);
  buyers = created.body.id;
});

describe('a behavioural condition is refused with a 400 naming the field', () => {
  const refused = async (filters: unknown, attr: string, detail: RegExp) => {
    const response = await create({ name: uniqueName('bad'), filters });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ type: 'invalid_request', code: 'invalid_input', attr, detail: expect.stringMatching(detail) });
  };

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['an unknown kind', { value: 'performed_event_sometimes' }, 'value', /one of performed_event/],
    ['an unknown event_type', { event_type: 'pages' }, 'event_type', /"events" or "actions"/],
    ['an absurd window', { time_value: 100_000 }, 'time_value', /at most 3660 days/],
    ['an unknown interval', { time_interval: 'decade' }, 'time_interval', /hour, day, week, month, year/],
    ['an absurd count', { value: 'performed_event_multiple', operator: 'gte', operator_value: 1e9 }, 'operator_value', /0 to 1000000/],
    ['a recent window longer than the window', { value: 'stopped_performing_event', seq_time_value: 60, seq_time_interval: 'day' }, 'seq_time_value', /shorter/],
    ['too many periods', { value: 'performed_event_regularly', total_periods: 500, min_periods: 1, operator_value: 1 }, 'total_periods', /1 to 100/],
  ])('%s', async (_case, changes, field, detail) => {
    await refused(group(purchased(changes)), `filters.properties.values[0].${field}`, detail);
  });

  it("an action of another project, or none, named by a behavioural condition", async () => {
    const theirs = await api.request('POST', `/api/projects/${other.project.id}/actions/`, other.personalApiKey, { name: 'theirs', steps: [{ event: 'purchase' }] });
    expect(theirs.status).toBe(201);
    await refused(group(purchased({ event_type: 'actions', key: theirs.body.id })), 'filters.properties.values[0].key', /does not exist in this project/);
  });

  it("another project's cohort within a cohort", async () => {
    const theirs = await create({ name: uniqueName('theirs'), filters: group(purchased()) }, other);
    await refused(group(inCohort(theirs.body.id)), 'filters.properties.values[0].value', /does not exist in this project/);
  });

  it('a cohort that would contain itself, directly or through another', async () => {
    const outer = await create({ name: uniqueName('outer'), filters: group(inCohort(buyers)) });
    expect(outer.status).toBe(201);
    const self = await patch(outer.body.id, { filters: group(inCohort(outer.body.id)) });
    expect(self.status).toBe(400);
    expect(self.body).toMatchObject({ attr: 'filters.properties', detail: expect.stringMatching(/contains itself/) });
    const inner = await create({ name: uniqueName('inner'), filters: group(inCohort(outer.body.id)) });
    const cycle = await patch(outer.body.id, { filters: group(inCohort(inner.body.id)) });
    expect(cycle.status).toBe(400);
    expect(cycle.body.detail).toMatch(/contains itself/);
  });

  it('cohorts nested deeper than the bound', async () => {
    let id = buyers;
    for (let depth = 0; depth < 4; depth++) id = (await create({ name: uniqueName('chain'), filters: group(inCohort(id)) })).body.id;
    await refused(group(inCohort(id)), 'filters.properties', /nest more than 5 deep/);
  });
});

describe('a behavioural cohort is used wherever a cohort is, in its project alone', () => {
  it("lists its persons from what they did: /cohorts/:id/persons/", async () => {
    const { status, body } = await api.request('GET', `${cohortsPath(tenant)}${buyers}/persons/`, tenant.personalApiKey);
    expect(status).toBe(200);
    expect(body.results.map((p: { uuid: string }) => p.uuid)).toEqual([PERSON.ann]);
    expect(body.results[0].distinct_ids.sort()).toEqual(['ann', 'ann-phone']);
    const negated = await create({ name: uniqueName('not buyers'), filters: group(purchased({ negation: true })) });
    const rest = await api.request('GET', `${cohortsPath(tenant)}${negated.body.id}/persons/`, tenant.personalApiKey);
    expect(rest.body.results.map((p: { uuid: string }) => p.uuid).sort()).toEqual([PERSON.ben, PERSON.cat].sort());
  });

  it("takes HogQL's person_id IN COHORT by name and by id, and NOT IN COHORT", async () => {
    const { body: cohort } = await api.request('GET', `${cohortsPath(tenant)}${buyers}/`, tenant.personalApiKey);
    const byName = await hogql(`SELECT distinct_id FROM events WHERE person_id IN COHORT '${cohort.name}' ORDER BY distinct_id`);
    expect(byName.status).toBe(200);
    expect(byName.body.results).toEqual([['ann'], ['ann-phone']]);
    expect((await hogql(`SELECT count() FROM events WHERE person_id IN COHORT ${buyers}`)).body.results).toEqual([[2]]);
    expect((await hogql(`SELECT distinct_id FROM events WHERE person_id NOT IN COHORT ${buyers} ORDER BY distinct_id`)).body.results).toEqual([['ben'], ['cat']]);
  });

  it("refuses IN COHORT naming another project's cohort, by name or id", async () => {
    const theirs = await create({ name: uniqueName('their buyers'), filters: group(purchased()) }, other);
    for (const ref of [`'${theirs.body.name}'`, String(theirs.body.id)]) {
      const { status, body } = await hogql(`SELECT count() FROM events WHERE person_id IN COHORT ${ref}`);
      expect(status).toBe(400);
      expect(body.detail).toMatch(/cohort .* does not exist/);
    }
    // In its own project it answers, with that project's rows alone.
    expect((await hogql(`SELECT distinct_id FROM events WHERE person_id IN COHORT ${theirs.body.id} ORDER BY distinct_id`, other)).body.results).toEqual([['ben'], ['cat']]);
  });

  it("filters the events list by it", async () => {
    const properties = encodeURIComponent(JSON.stringify([{ key: 'id', type: 'cohort', value: buyers }]));
    const { status, body } = await api.request('GET', `/api/projects/${tenant.project.id}/events/?properties=${properties}`, tenant.personalApiKey);
    expect(status).toBe(200);
    expect(body.results.map((e: { distinct_id: string }) => e.distinct_id).sort()).toEqual(['ann', 'ann-phone']);
  });

  it("filters an insight by it, and by a cohort within it", async () => {
    const within = await create({ name: uniqueName('within'), filters: group(inCohort(buyers)) });
    for (const id of [buyers, within.body.id]) {
      const { status, body } = await api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, {
        query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'purchase', math: 'total' }], dateRange: { date_from: '-60d' }, interval: 'month', properties: [{ key: 'id', type: 'cohort', value: id }], trendsFilter: { display: 'BoldNumber' } },
        refresh: 'force_blocking',
      });
      expect(status).toBe(200);
      expect(body.results[0].aggregated_value).toBe(2);
    }
  });
});
