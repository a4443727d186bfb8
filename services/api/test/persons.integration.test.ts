import { jest } from '@jest/globals';
import { createClickHouse, sql, type ClickHouse } from '@tributary/clickhouse';
import { createKey, waitFor, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

/**
 * Persons endpoints on the running system (`make up`): events go in through the front door's
 * capture and the running ingest service, and the API under test publishes its changes to the
 * same Kafka topic, so every change here really travels through ingestion.
 */
let api: ApiHarness;
let tenant: TestTenant;
let clickhouse: ClickHouse;
let run = 0;

const unique = (name: string) => `${name}-${++run}-${Date.now()}`;
const base = () => `/api/environments/${tenant.project.id}/persons/`;
const call = (method: string, path: string, body?: unknown, key = tenant.personalApiKey) => api.request(method, `${base()}${path}`, key, body);

async function capture(events: Record<string, unknown>[]): Promise<void> {
  const response = await fetch(`${api.config.publicUrl}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: tenant.project.api_token, batch: events }),
  });
  expect(response.status).toBe(200);
}

/** The person of a distinct id once ingest created it (and, if given, once `ready` holds). */
async function personOf(distinctId: string, ready: (person: any) => boolean = () => true): Promise<any> {
  return waitFor(
    async () => {
      const { body } = await call('GET', `?distinct_id=${encodeURIComponent(distinctId)}`);
      const person = body?.results?.[0];
      return person && ready(person) ? person : undefined;
    },
    { what: `person of ${distinctId}`, timeoutMs: 60_000 },
  );
}

async function chPerson(uuid: string): Promise<{ is_deleted: number; version: number } | undefined> {
  const rows = await clickhouse.query<{ is_deleted: number; version: string }>(
    sql`SELECT is_deleted, version FROM person WHERE team_id = ${tenant.project.id} AND toString(id) = ${uuid} ORDER BY version DESC LIMIT 1`,
  );
  return rows[0] ? { is_deleted: Number(rows[0].is_deleted), version: Number(rows[0].version) } : undefined;
}

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));
beforeAll(() => {
  clickhouse = createClickHouse(api.config);
});

afterAll(async () => {
  await clickhouse.close();
});

describe('reading persons', () => {
  let ann: any;
  let bob: any;
  beforeAll(async () => {
    const [a, b, c] = [unique('ann'), unique('bob'), unique('cid')];
    await capture([
      { event: 'signed up', distinct_id: a, properties: { $set: { email: 'ann@acme.test', name: 'Ann', plan: 'pro', seats: 12 } } },
      { event: 'signed up', distinct_id: b, properties: { $set: { name: 'Bob', plan: 'free', seats: 3 } } },
      { event: 'page', distinct_id: c },
    ]);
    ann = await personOf(a);
    bob = await personOf(b);
    await personOf(c);
  }, 90_000);

  it('lists persons with the spec fields, newest first, named by email, name or first distinct id', async () => {
    const { status, body } = await call('GET', '');
    expect(status).toBe(200);
    expect(body.count).toBe(3);
    expect(body.results.map((p: any) => p.name).sort()).toEqual(['Bob', 'ann@acme.test', expect.stringMatching(/^cid-/)]);
    expect(body.results.map((p: any) => p.id)).toEqual(body.results.map((p: any) => p.id).sort((a: number, b: number) => b - a));
    const found = body.results.find((p: any) => p.id === ann.id);
    expect(Object.keys(found).sort()).toEqual(['created_at', 'distinct_ids', 'id', 'name', 'properties', 'uuid']);
    expect(found).toMatchObject({ uuid: ann.uuid, distinct_ids: ann.distinct_ids, properties: { email: 'ann@acme.test', plan: 'pro' } });
  });

  it('pages with limit and offset, with full next and previous URLs', async () => {
    const first = await call('GET', '?limit=2');
    expect(first.body.results).toHaveLength(2);
    expect(first.body.previous).toBeNull();
    const next = new URL(first.body.next);
    expect(next.origin).toBe(new URL(api.config.publicUrl).origin);
    expect(next.searchParams.get('offset')).toBe('2');
    const second = await call('GET', '?limit=2&offset=2');
    expect(second.body.results).toHaveLength(1);
    const all = (await call('GET', '')).body.results.map((p: any) => p.id);
    expect([...first.body.results, ...second.body.results].map((p: any) => p.id)).toEqual(all);
    expect(second.body.next).toBeNull();
    expect(second.body.previous).not.toBeNull();
  });

  it('searches by email, name and distinct id, and filters by email, distinct id and properties', async () => {
    const ids = async (query: string) => (await call('GET', query)).body.results.map((p: any) => p.id);
    expect(await ids('?search=ACME')).toEqual([ann.id]);
    expect(await ids('?search=bob')).toEqual([bob.id]);
    expect(await ids(`?search=${encodeURIComponent(bob.distinct_ids[0])}`)).toEqual([bob.id]);
    expect(await ids('?email=Ann@Acme.test')).toEqual([ann.id]);
    expect(await ids(`?distinct_id=${encodeURIComponent(ann.distinct_ids[0])}`)).toEqual([ann.id]);
    const filter = (f: unknown) => `?properties=${encodeURIComponent(JSON.stringify(f))}`;
    expect(await ids(filter([{ key: 'plan', value: 'PRO', operator: 'exact', type: 'person' }]))).toEqual([ann.id]);
    expect(await ids(filter([{ key: 'seats', value: 5, operator: 'gt' }]))).toEqual([ann.id]);
    expect(await ids(filter([{ key: 'seats', value: 5, operator: 'lt' }]))).toEqual([bob.id]);
    expect(await ids(filter([{ key: 'email', operator: 'is_not_set' }, { key: 'name', operator: 'icontains', value: 'o' }]))).toEqual([bob.id]);
  });

  it('retrieves one person, and answers 404 for an unknown or malformed id', async () => {
    const { status, body } = await call('GET', `${ann.id}/`);
    expect(status).toBe(200);
    expect(body).toEqual(ann);
    expect((await call('GET', '999999999/')).status).toBe(404);
    expect((await call('GET', 'not-a-number/')).status).toBe(404);
  });

  it('answers format=csv with a header and one row a person', async () => {
    const { status, headers, text } = await call('GET', `?format=csv&distinct_id=${encodeURIComponent(ann.distinct_ids[0])}`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/text\/csv/);
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe('id,name,distinct_ids,properties,created_at,uuid');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('ann@acme.test');
  });

  it('rejects malformed filters and parameters with 400 naming the problem', async () => {
    const notJson = await call('GET', '?properties=[{');
    expect(notJson.status).toBe(400);
    expect(notJson.body.attr).toBe('properties');
    const badOperator = await call('GET', `?properties=${encodeURIComponent(JSON.stringify([{ key: 'a', value: 1, operator: 'between' }]))}`);
    expect(badOperator.status).toBe(400);
    expect(badOperator.body.detail).toMatch(/between/);
    const badLimit = await call('GET', '?limit=0');
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.attr).toBe('limit');
  });

  it('requires person:read, and activity_log:read for the activity log', async () => {
    const cohortsOnly = await createKey(api.pool, api.config, tenant.user.id, ['cohort:read']);
    const denied = await call('GET', '', undefined, cohortsOnly);
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(/person:read/);
    const personsOnly = await createKey(api.pool, api.config, tenant.user.id, ['person:read']);
    expect((await call('GET', 'activity/', undefined, personsOnly)).status).toBe(403);
    expect((await call('PATCH', `${ann.id}/`, { properties: { a: 1 } }, personsOnly)).status).toBe(403);
  });

  it('requires person:write to delete, split, update_property, delete_property and bulk_delete, changing nothing without it', async () => {
    const readOnly = await createKey(api.pool, api.config, tenant.user.id, ['person:read']);
    const refused = await Promise.all([
      call('DELETE', `${ann.id}/`, undefined, readOnly),
      call('POST', `${ann.id}/split/`, {}, readOnly),
      call('POST', `${ann.id}/update_property/?key=plan&value=free`, {}, readOnly),
      call('POST', `${ann.id}/delete_property/?$unset=plan`, {}, readOnly),
      call('POST', `bulk_delete/?ids=${ann.id}`, {}, readOnly),
    ]);
    for (const { status, body } of refused) {
      expect(status).toBe(403);
      expect(body.detail).toMatch(/person:write/);
    }
    const after = await call('GET', `${ann.id}/`);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ uuid: ann.uuid, distinct_ids: ann.distinct_ids, properties: { plan: 'pro' } });
  });
});

describe('changing properties through ingestion', () => {
  it('PATCH answers with the person as it will be, and GET shows it once ingest applied the $set', async () => {
    const id = unique('patch');
    await capture([{ event: 'seen', distinct_id: id, properties: { $set: { plan: 'free', name: 'Pat' } } }]);
    const person = await personOf(id);
    const { status, body } = await call('PATCH', `${person.id}/`, { properties: { plan: 'pro', seats: 4 } });
    expect(status).toBe(200);
    expect(body).toEqual({ ...person, properties: { ...person.properties, plan: 'pro', seats: 4 } });
    const after = await personOf(id, (p) => p.properties.plan === 'pro');
    expect(after.properties).toEqual(body.properties);

    const log = await call('GET', `${person.id}/activity/`);
    expect(log.status).toBe(200);
    expect(log.body.results[0]).toMatchObject({
      activity: 'updated',
      scope: 'Person',
      item_id: String(person.id),
      user: { id: tenant.user.id, email: tenant.user.email },
      detail: {
        changes: [
          { type: 'Person', action: 'changed', field: 'plan', before: 'free', after: 'pro' },
          { type: 'Person', action: 'created', field: 'seats', before: null, after: 4 },
        ],
      },
    });
  });

  it('update_property sets one key and delete_property removes one, both answering 200', async () => {
    const id = unique('prop');
    await capture([{ event: 'seen', distinct_id: id, properties: { $set: { keep: 1, drop: 2 } } }]);
    const person = await personOf(id);
    const set = await call('POST', `${person.id}/update_property/?key=tier&value=gold`);
    expect(set.status).toBe(200);
    await personOf(id, (p) => p.properties.tier === 'gold');
    const unset = await call('POST', `${person.id}/delete_property/?$unset=drop`);
    expect(unset.status).toBe(200);
    const after = await personOf(id, (p) => !('drop' in p.properties));
    expect(after.properties).toEqual({ keep: 1, tier: 'gold' });
  });

  it('rejects a PATCH without properties, and update_property without a key, with 400', async () => {
    const id = unique('bad');
    await capture([{ event: 'seen', distinct_id: id }]);
    const person = await personOf(id);
    const patch = await call('PATCH', `${person.id}/`, { name: 'x' });
    expect(patch.status).toBe(400);
    expect(patch.body.attr).toBe('properties');
    const noKey = await call('POST', `${person.id}/update_property/?value=1`);
    expect(noKey.status).toBe(400);
    expect(noKey.body.attr).toBe('key');
    const noUnset = await call('POST', `${person.id}/delete_property/`);
    expect(noUnset.status).toBe(400);
    expect(noUnset.body.attr).toBe('$unset');
  });
});

describe('deleting persons', () => {
  it('DELETE removes the person and its ids everywhere, queues its events with delete_events, and a later event makes a new person', async () => {
    const id = unique('gone');
    await capture([{ event: 'seen', distinct_id: id, properties: { $set: { plan: 'pro' } } }]);
    const person = await personOf(id);
    await api.redis.set(`tributary:person:${tenant.project.id}:${id}`, JSON.stringify({ personId: person.id }));

    const { status, text } = await call('DELETE', `${person.id}/?delete_events=true`);
    expect(status).toBe(204);
    expect(text).toBe('');
    expect((await call('GET', `${person.id}/`)).status).toBe(404);
    expect((await call('DELETE', `${person.id}/`)).status).toBe(404);
    const { rows } = await api.pool.query('SELECT person_uuid, distinct_ids, done_at FROM event_deletion_requests WHERE team_id = $1', [tenant.project.id]);
    expect(rows).toEqual([{ person_uuid: person.uuid, distinct_ids: [id], done_at: null }]);
    expect(await api.redis.get(`tributary:person:${tenant.project.id}:${id}`)).toBeNull();
    const tombstone = await waitFor(async () => (await chPerson(person.uuid))?.is_deleted === 1 && chPerson(person.uuid));
    expect(tombstone).toBeTruthy();

    await capture([{ event: 'back again', distinct_id: id, properties: { $set: { plan: 'free' } } }]);
    const reborn = await personOf(id);
    expect(reborn.id).not.toBe(person.id);
    expect(reborn.properties).toEqual({ plan: 'free' });
    // The same derived uuid comes back above the tombstone, so ClickHouse shows the person again.
    const copy = await waitFor(async () => {
      const row = await chPerson(reborn.uuid);
      return row && row.is_deleted === 0 ? row : undefined;
    }, { what: 'the new person in ClickHouse' });
    expect(copy.version).toBeGreaterThan(tombstone ? (tombstone as { version: number }).version : 0);

    const log = await call('GET', 'activity/');
    expect(log.body.results.find((a: any) => a.activity === 'deleted' && a.item_id === String(person.id))).toMatchObject({ detail: { distinct_ids: [id], delete_events: true } });
  });

  it('a Redis error on the deletion queue goes to the service log, not raw to the console (BullMQ reconnects)', () => {
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(() => api.deletionQueue.emit('error', new Error('Connection is closed.'))).not.toThrow();
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });

  it('bulk_delete takes ids and distinct ids, counts what it found, and limits each list to 100', async () => {
    const [a, b, c] = [unique('bulk'), unique('bulk'), unique('bulk')];
    await capture([a, b, c].map((distinct_id) => ({ event: 'seen', distinct_id })));
    const [pa, pb, pc] = [await personOf(a), await personOf(b), await personOf(c)];
    const { status, body } = await call('POST', 'bulk_delete/', { ids: [pa.id, 999999999], distinct_ids: [b, 'nobody-has-this-id'], delete_events: false });
    expect(status).toBe(200);
    expect(body).toEqual({ persons_found: 2, persons_deleted: 2, deletions_queued: 0 });
    expect((await call('GET', `${pb.id}/`)).status).toBe(404);
    expect((await call('GET', `${pc.id}/`)).status).toBe(200);

    const viaQuery = await call('POST', `bulk_delete/?distinct_ids=${encodeURIComponent(JSON.stringify([c]))}&delete_events=true`);
    expect(viaQuery.body).toEqual({ persons_found: 1, persons_deleted: 1, deletions_queued: 1 });

    const tooMany = await call('POST', 'bulk_delete/', { ids: Array.from({ length: 101 }, (_, i) => i + 1) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ attr: 'ids', detail: expect.stringMatching(/at most 100/) });
    const empty = await call('POST', 'bulk_delete/', {});
    expect(empty.status).toBe(400);
    const malformed = await call('POST', 'bulk_delete/?ids=[1,');
    expect(malformed.status).toBe(400);
    expect(malformed.body.attr).toBe('ids');
  });
});

describe('splitting a person', () => {
  it('keeps main_distinct_id on the person and gives every other distinct id a person of its own', async () => {
    const [user, anon, alias] = [unique('user'), unique('anon'), unique('alias')];
    await capture([
      { event: 'page', distinct_id: anon, properties: { $set: { plan: 'pro' } } },
      { event: 'page', distinct_id: user },
    ]);
    for (const id of [anon, user]) await personOf(id);
    await capture([
      { event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon } },
      { event: '$create_alias', distinct_id: user, properties: { alias } },
    ]);
    const merged = await personOf(user, (p) => p.distinct_ids.length === 3);

    const { status, text } = await call('POST', `${merged.id}/split/`, { main_distinct_id: user });
    expect(status).toBe(200);
    expect(text).toBe('');
    const kept = (await call('GET', `${merged.id}/`)).body;
    expect(kept.distinct_ids).toEqual([user]);
    expect(kept.properties).toEqual(merged.properties);
    const others = [await personOf(anon), await personOf(alias)];
    expect(new Set(others.map((p) => p.id)).size).toBe(2);
    for (const other of others) {
      expect(other.id).not.toBe(merged.id);
      expect(other.distinct_ids).toHaveLength(1);
    }
    const [copy] = await clickhouse.query<{ person: string }>(
      sql`SELECT toString(argMax(person_id, version)) AS person FROM person_distinct_id WHERE team_id = ${tenant.project.id} AND distinct_id = ${anon}`,
    );
    expect(copy!.person).toBe(others[0].uuid);
    const log = await call('GET', `${merged.id}/activity/`);
    expect(log.body.results[0]).toMatchObject({ activity: 'split', detail: { kept: user } });
    // ingest recorded the merge that the split undid
    expect(log.body.results.some((a: any) => a.activity === 'merged' && a.user === null)).toBe(true);
  });

  it('answers 404 for a person that does not exist', async () => {
    expect((await call('POST', '999999999/split/', {})).status).toBe(404);
  });
});

describe('properties timeline and cohorts', () => {
  it('lists the points where the person properties recorded on its events changed', async () => {
    const id = unique('timeline');
    await capture([
      { event: 'a', distinct_id: id, timestamp: '2026-01-01T00:00:00Z', properties: { $set: { plan: 'free' } } },
      { event: 'b', distinct_id: id, timestamp: '2026-01-02T00:00:00Z' },
      { event: 'c', distinct_id: id, timestamp: '2026-01-03T00:00:00Z', properties: { $set: { plan: 'pro' } } },
    ]);
    const person = await personOf(id, (p) => p.properties.plan === 'pro');
    const body = await waitFor(async () => {
      const response = await call('GET', `${person.id}/properties_timeline/`);
      return response.body.points.length === 2 && response.body.points[1].relevant_event_count === 1 ? response.body : undefined;
    }, { what: 'the timeline' });
    expect(body.points).toEqual([
      { timestamp: '2026-01-01T00:00:00Z', properties: { plan: 'free' }, relevant_event_count: 2, start_event_timestamp: '2026-01-01T00:00:00Z', end_event_timestamp: '2026-01-02T00:00:00Z' },
      { timestamp: '2026-01-03T00:00:00Z', properties: { plan: 'pro' }, relevant_event_count: 1, start_event_timestamp: '2026-01-03T00:00:00Z', end_event_timestamp: '2026-01-03T00:00:00Z' },
    ]);
    expect(body).toMatchObject({ effective_date_from: '2026-01-01T00:00:00Z', effective_date_to: '2026-01-03T00:00:00Z' });
  });

  it('lists the static and dynamic cohorts a person belongs to', async () => {
    const id = unique('member');
    await capture([{ event: 'seen', distinct_id: id, properties: { $set: { email: 'member@acme.test' } } }]);
    const person = await personOf(id);
    const cohorts = `/api/environments/${tenant.project.id}/cohorts/`;
    const make = (body: unknown) => api.request('POST', cohorts, tenant.personalApiKey, body).then((r) => r.body.id as number);
    const acme = await make({ name: 'acme', filters: { properties: { type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value: 'acme' }] } } });
    const other = await make({ name: 'other', filters: { properties: { type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value: 'globex' }] } } });
    const listed = await make({ name: 'listed', is_static: true, distinct_ids: [id] });
    const { status, body } = await call('GET', `cohorts/?person_id=${person.id}`);
    expect(status).toBe(200);
    expect(body.results.map((c: any) => c.id)).toEqual([acme, listed]);
    expect(body.results.map((c: any) => c.id)).not.toContain(other);
    expect((await call('GET', 'cohorts/')).status).toBe(400);
    expect((await call('GET', 'cohorts/?person_id=999999999')).status).toBe(404);
    const personOnly = await createKey(api.pool, api.config, tenant.user.id, ['person:read']);
    expect((await call('GET', `cohorts/?person_id=${person.id}`, undefined, personOnly)).status).toBe(403);
  });
});
