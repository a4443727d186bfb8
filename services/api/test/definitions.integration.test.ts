import { migrateClickHouse } from '@tributary/clickhouse';
import { migratePostgres } from '@tributary/postgres';
import { EVENT_ROW_COLUMNS, createKey, createTestTenant, eventRow, testConfig, uniqueName, type TestTenant } from '@tributary/test-support';
import { startApi, type ApiHarness } from './api-harness.js';
import { dropIsolatedStores, isolatedStores } from './isolated-stores.js';

/** Stores of the file's own, migrated with the definitions tables (migration 0016). */
const stores = isolatedStores(uniqueName('definitions_api'));
let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const ago = (days: number) => new Date(Date.now() - days * 86_400_000);
const chTime = (date: Date) => date.toISOString().replace('T', ' ').slice(0, 19);

/** Definitions as ingest writes them. */
async function seed(teamId: number): Promise<void> {
  const events: [string, Date][] = [
    ['$pageview', ago(0)],
    ['purchase', ago(0)],
    ['signed up', ago(3)],
    ['$autocapture', ago(10)],
  ];
  for (const [name, seen] of events) await api.pool.query('INSERT INTO event_definitions (team_id, name, created_at, last_seen_at) VALUES ($1, $2, $3, $3)', [teamId, name, seen]);
  const properties: [string, number, number | null, string | null][] = [
    ['$browser', 1, null, 'String'],
    ['price', 1, null, 'Numeric'],
    ['quantity', 1, null, 'Numeric'],
    ['timestamp', 1, null, 'Numeric'],
    ['paid_at', 1, null, 'DateTime'],
    ['$feature/checkout', 1, null, 'String'],
    ['distinct_id', 1, null, 'String'],
    ['email', 2, null, 'String'],
    ['plan', 2, null, 'String'],
    ['seats', 3, 0, 'Numeric'],
    ['industry', 3, 1, 'String'],
  ];
  for (const [name, type, index, propertyType] of properties) {
    await api.pool.query('INSERT INTO property_definitions (team_id, name, type, group_type_index, property_type, is_numerical) VALUES ($1, $2, $3, $4, $5, $6)', [
      teamId,
      name,
      type,
      index,
      propertyType,
      propertyType === 'Numeric',
    ]);
  }
  for (const [event, property] of [['purchase', 'price'], ['purchase', 'quantity'], ['purchase', 'paid_at'], ['$pageview', '$browser']]) {
    await api.pool.query('INSERT INTO event_properties (team_id, event, property) VALUES ($1, $2, $3)', [teamId, event, property]);
  }
}

beforeAll(async () => {
  const config = testConfig(stores);
  await migratePostgres(config);
  await migrateClickHouse(config);
  api = await startApi(stores);
  tenant = await createTestTenant(api.pool, api.config);
  other = await createTestTenant(api.pool, api.config);
  await seed(tenant.project.id);
  // The other project has definitions of the same names, and one of its own.
  await seed(other.project.id);
  await api.pool.query("INSERT INTO event_definitions (team_id, name, last_seen_at) VALUES ($1, 'other only', now())", [other.project.id]);
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
    ...[1, 2, 3].map(() => eventRow(tenant.project.id, 'u', 'purchase', chTime(ago(1)))),
    eventRow(tenant.project.id, 'u', 'purchase', chTime(ago(40))),
    eventRow(tenant.project.id, 'u', '$pageview', chTime(ago(2))),
    ...[1, 2, 3, 4, 5].map(() => eventRow(other.project.id, 'u', 'purchase', chTime(ago(1)))),
  ]);
}, 90_000);

afterAll(async () => {
  await api?.close();
  await dropIsolatedStores(testConfig(stores));
});

const path = (resource: string, query = '', t = tenant, base: 'projects' | 'environments' = 'projects') => `/api/${base}/${t.project.id}/${resource}/${query}`;
const get = async (resource: string, query = '', t = tenant, base: 'projects' | 'environments' = 'projects') => {
  const response = await api.request('GET', path(resource, query, t, base), t.personalApiKey);
  expect(response.status).toBe(200);
  return response.body;
};
const names = (body: { results: { name: string }[] }) => body.results.map((r) => r.name);

describe('GET /event_definitions/', () => {
  it('lists the project\'s event names in PostHog\'s shape, last seen day first, then by name, with their 30-day volume', async () => {
    const body = await get('event_definitions');
    expect(body).toMatchObject({ count: 4, next: null, previous: null });
    expect(names(body)).toEqual(['$pageview', 'purchase', 'signed up', '$autocapture']);
    const purchase = body.results.find((r: { name: string }) => r.name === 'purchase');
    expect(purchase).toEqual({
      id: expect.any(String),
      name: 'purchase',
      owner: null,
      description: '',
      tags: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
      updated_by: null,
      last_seen_at: expect.any(String),
      last_updated_at: expect.any(String),
      verified: false,
      verified_at: null,
      verified_by: null,
      hidden: false,
      is_action: false,
      action_id: null,
      is_calculating: false,
      last_calculated_at: null,
      created_by: null,
      post_to_slack: false,
      default_columns: [],
      volume_30_day: 3,
      query_usage_30_day: null,
    });
    expect(body.results.find((r: { name: string }) => r.name === 'signed up').volume_30_day).toBe(0);
  });

  it('searches by every term, splits PostHog events from custom ones, orders and pages as asked', async () => {
    expect(names(await get('event_definitions', '?search=sign%20up'))).toEqual(['signed up']);
    expect(names(await get('event_definitions', '?search=%25'))).toEqual([]);
    expect(names(await get('event_definitions', '?event_type=event_posthog'))).toEqual(['$pageview', '$autocapture']);
    expect(names(await get('event_definitions', '?event_type=event_custom'))).toEqual(['purchase', 'signed up']);
    expect(names(await get('event_definitions', '?event_type=action_event'))).toEqual([]);
    expect(names(await get('event_definitions', '?ordering=-name'))).toEqual(['signed up', 'purchase', '$pageview', '$autocapture']);
    expect(names(await get('event_definitions', '?ordering=last_seen_at&ordering=name'))).toEqual(['$autocapture', 'signed up', '$pageview', 'purchase']);
    expect(names(await get('event_definitions', `?excluded_properties=${encodeURIComponent('["purchase"]')}`))).toEqual(['$pageview', 'signed up', '$autocapture']);
    const page = await get('event_definitions', '?limit=2&offset=1&ordering=name');
    expect({ count: page.count, names: names(page) }).toEqual({ count: 4, names: ['$pageview', 'purchase'] });
    expect(page.next).toContain('offset=3');
    expect(page.previous).toContain('offset=0');
  });

  it('counts the volume of every name on a page, past HogQL\'s default row limit', async () => {
    const many = await createTestTenant(api.pool, api.config);
    const eventNames = Array.from({ length: 120 }, (_, i) => `event ${i}`);
    await api.pool.query('INSERT INTO event_definitions (team_id, name, last_seen_at) SELECT $1, name, now() FROM unnest($2::text[]) AS name', [many.project.id, eventNames]);
    await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, eventNames.map((name) => eventRow(many.project.id, 'u', name, chTime(ago(1)))));
    const body = await get('event_definitions', '?limit=200', many);
    expect(body.results.map((r: { volume_30_day: number }) => r.volume_30_day)).toEqual(eventNames.map(() => 1));
  });

  it('is served under /api/environments/ too', async () => {
    expect((await get('event_definitions', '', tenant, 'environments')).count).toBe(4);
  });

  it('refuses a bad filter with a 400', async () => {
    for (const query of ['?event_type=nope', '?excluded_properties=not-json', '?exclude_hidden=maybe', '?limit=0']) {
      const response = await api.request('GET', path('event_definitions', query), tenant.personalApiKey);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
  });
});

describe('GET and PATCH /event_definitions/:id/', () => {
  it('describes, tags, verifies and hides an event definition, and hidden ones can be left out of the list', async () => {
    const { results } = await get('event_definitions', '?search=purchase');
    const id = results[0].id;
    const patched = await api.request('PATCH', path('event_definitions', `${id}/`), tenant.personalApiKey, { description: 'A completed order', tags: [' Revenue ', 'revenue', 'core'], verified: true, name: 'ignored' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'purchase', description: 'A completed order', tags: ['revenue', 'core'], verified: true, verified_by: { id: tenant.user.id }, updated_by: { id: tenant.user.id }, volume_30_day: 3 });
    expect(patched.body.verified_at).toEqual(expect.any(String));
    expect((await get('event_definitions', `${id}/`)).description).toBe('A completed order');

    const both = await api.request('PATCH', path('event_definitions', `${id}/`), tenant.personalApiKey, { hidden: true, verified: true });
    expect(both.status).toBe(400);
    const signedUp = (await get('event_definitions', '?search=signed')).results[0].id;
    expect((await api.request('PATCH', path('event_definitions', `${signedUp}/`), tenant.personalApiKey, { hidden: true })).status).toBe(200);
    expect(names(await get('event_definitions', '?exclude_hidden=true'))).not.toContain('signed up');
    expect(names(await get('event_definitions'))).toContain('signed up');
    expect((await api.request('PATCH', path('event_definitions', `${id}/`), tenant.personalApiKey, { tags: 'revenue' })).status).toBe(400);
  });
});

describe('DELETE', () => {
  it('deletes an event or property definition of the project', async () => {
    const t = await createTestTenant(api.pool, api.config);
    await seed(t.project.id);
    const event = (await get('event_definitions', '?search=autocapture', t)).results[0].id;
    const property = (await get('property_definitions', '?search=quantity', t)).results[0].id;
    for (const [resource, id] of [['event_definitions', event], ['property_definitions', property]] as const) {
      expect((await api.request('DELETE', path(resource, `${id}/`, t), t.personalApiKey)).status).toBe(204);
      expect((await api.request('GET', path(resource, `${id}/`, t), t.personalApiKey)).status).toBe(404);
      expect((await api.request('DELETE', path(resource, `${id}/`, t), t.personalApiKey)).status).toBe(404);
    }
    expect(names(await get('event_definitions', '', t))).toEqual(['$pageview', 'purchase', 'signed up']);
  });
});

describe('GET /property_definitions/', () => {
  it('lists event properties by default, without the keys PostHog hides, in its shape', async () => {
    const body = await get('property_definitions');
    expect(names(body)).toEqual(['$browser', '$feature/checkout', 'paid_at', 'price', 'quantity', 'timestamp']);
    expect(body.results.find((r: { name: string }) => r.name === 'price')).toEqual({
      id: expect.any(String),
      name: 'price',
      is_numerical: true,
      property_type: 'Numeric',
      is_seen_on_filtered_events: null,
      description: '',
      tags: [],
      updated_at: expect.any(String),
      updated_by: null,
      verified: false,
      verified_at: null,
      verified_by: null,
      hidden: false,
    });
  });

  it('lists person and group properties by type, a group type needing its index', async () => {
    expect(names(await get('property_definitions', '?type=person'))).toEqual(['email', 'plan']);
    expect(names(await get('property_definitions', '?type=group&group_type_index=0'))).toEqual(['seats']);
    expect(names(await get('property_definitions', '?type=group&group_type_index=1'))).toEqual(['industry']);
    for (const query of ['?type=group', '?type=person&group_type_index=0', '?type=session', '?group_type_index=9']) {
      const response = await api.request('GET', path('property_definitions', query), tenant.personalApiKey);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
  });

  it('puts the properties seen on the given events first, or only those with filter_by_event_names', async () => {
    const events = encodeURIComponent(JSON.stringify(['purchase']));
    const body = await get('property_definitions', `?event_names=${events}`);
    expect(body.results.map((r: { name: string; is_seen_on_filtered_events: boolean }) => [r.name, r.is_seen_on_filtered_events])).toEqual([
      ['paid_at', true],
      ['price', true],
      ['quantity', true],
      ['$browser', false],
      ['$feature/checkout', false],
      ['timestamp', false],
    ]);
    expect(names(await get('property_definitions', `?event_names=${events}&filter_by_event_names=true`))).toEqual(['paid_at', 'price', 'quantity']);
    expect((await api.request('GET', path('property_definitions', '?event_names=[purchase'), tenant.personalApiKey)).status).toBe(400);
  });

  it('filters numerical ones (never timestamp), flags, names, search and hidden ones', async () => {
    expect(names(await get('property_definitions', '?is_numerical=true'))).toEqual(['price', 'quantity']);
    expect(names(await get('property_definitions', '?is_feature_flag=true'))).toEqual(['$feature/checkout']);
    expect(names(await get('property_definitions', '?is_feature_flag=false'))).not.toContain('$feature/checkout');
    expect(names(await get('property_definitions', '?properties=price,paid_at,email'))).toEqual(['paid_at', 'price']);
    expect(names(await get('property_definitions', '?search=pri'))).toEqual(['price']);
    expect(names(await get('property_definitions', `?excluded_properties=${encodeURIComponent('["price"]')}`))).not.toContain('price');
    const quantity = (await get('property_definitions', '?search=quantity')).results[0].id;
    expect((await api.request('PATCH', path('property_definitions', `${quantity}/`), tenant.personalApiKey, { hidden: true })).status).toBe(200);
    expect(names(await get('property_definitions', '?exclude_hidden=true'))).not.toContain('quantity');
  });
});

describe('GET and PATCH /property_definitions/:id/', () => {
  it('describes, tags and retypes a property definition', async () => {
    const id = (await get('property_definitions', '?search=paid_at')).results[0].id;
    const patched = await api.request('PATCH', path('property_definitions', `${id}/`), tenant.personalApiKey, { description: 'When it was paid', tags: ['billing'], property_type: 'Numeric' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'paid_at', description: 'When it was paid', tags: ['billing'], property_type: 'Numeric', is_numerical: true, updated_by: { id: tenant.user.id } });
    expect((await get('property_definitions', `${id}/`)).property_type).toBe('Numeric');
    expect((await api.request('PATCH', path('property_definitions', `${id}/`), tenant.personalApiKey, { property_type: 'Duration' })).status).toBe(400);
  });
});

describe('hostile input', () => {
  it('is a 400 in the error shape, never a 500', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `p${i}`).join(',');
    const objects = encodeURIComponent(JSON.stringify([{ event: 'purchase' }]));
    const eventId = (await get('event_definitions')).results[0].id;
    for (const [method, target, body] of [
      ['GET', path('event_definitions', '?search=%00'), undefined],
      ['GET', path('property_definitions', `?properties=${many}`), undefined],
      ['GET', path('property_definitions', `?event_names=${objects}`), undefined],
      ['GET', path('property_definitions', '?event_names=%7B%7D'), undefined],
      ['GET', path('property_definitions', '?group_type_index=-1&type=group'), undefined],
      ['PATCH', path('event_definitions', `${eventId}/`), { description: 7 }],
      ['PATCH', path('event_definitions', `${eventId}/`), { tags: ['x'.repeat(300)] }],
      ['PATCH', path('event_definitions', `${eventId}/`), [1, 2]],
      ['PATCH', path('event_definitions', `${eventId}/`), { description: 'nul\u0000' }],
    ] as const) {
      const response = await api.request(method, target, tenant.personalApiKey, body);
      expect({ target, status: response.status, body: response.body }).toEqual({ target, status: 400, body: expect.objectContaining({ type: 'invalid_request', detail: expect.any(String) }) });
    }
  });
});

describe('isolation and scopes', () => {
  it("never lists another project's definitions, and answers 404 for another project's id or one that is not a uuid", async () => {
    expect(names(await get('event_definitions'))).not.toContain('other only');
    const theirs = (await get('event_definitions', '?search=other', other)).results[0].id;
    const theirProperty = (await get('property_definitions', '?search=price', other)).results[0].id;
    // Their volume counts their events only.
    expect((await get('event_definitions', '?search=purchase', other)).results[0].volume_30_day).toBe(5);
    for (const [method, resource, id] of [
      ['GET', 'event_definitions', theirs],
      ['PATCH', 'event_definitions', theirs],
      ['GET', 'property_definitions', theirProperty],
      ['PATCH', 'property_definitions', theirProperty],
      ['DELETE', 'event_definitions', theirs],
      ['DELETE', 'property_definitions', theirProperty],
      ['GET', 'event_definitions', 'not-a-uuid'],
      ['GET', 'property_definitions', '42'],
    ] as const) {
      const response = await api.request(method, path(resource, `${id}/`), tenant.personalApiKey, method === 'PATCH' ? { description: 'stolen' } : undefined);
      expect({ method, resource, id, status: response.status }).toEqual({ method, resource, id, status: 404 });
    }
    expect((await get('event_definitions', `${theirs}/`, other)).description).toBe('');
    // Another project's key cannot name this project.
    expect((await api.request('GET', path('event_definitions', '', tenant), other.personalApiKey)).status).toBe(403);
  });

  it('needs event_definition and property_definition scopes, :read to read and :write to change', async () => {
    const eventId = (await get('event_definitions')).results[0].id;
    const propertyId = (await get('property_definitions')).results[0].id;
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['event_definition:read', 'property_definition:read']);
    expect((await api.request('GET', path('event_definitions'), reader)).status).toBe(200);
    expect((await api.request('GET', path('property_definitions'), reader)).status).toBe(200);
    for (const [resource, id, scope] of [['event_definitions', eventId, 'event_definition:write'], ['property_definitions', propertyId, 'property_definition:write']] as const) {
      for (const [method, body] of [['PATCH', { description: 'x' }], ['DELETE', undefined]] as const) {
        const refused = await api.request(method, path(resource, `${id}/`), reader, body);
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ code: 'missing_scope', detail: expect.stringContaining(`'${scope}'`) });
      }
    }
    const unrelated = await createKey(api.pool, api.config, tenant.user.id, ['insight:read']);
    for (const [resource, scope] of [['event_definitions', 'event_definition:read'], ['property_definitions', 'property_definition:read']] as const) {
      const refused = await api.request('GET', path(resource), unrelated);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain(`'${scope}'`);
    }
    const writer = await createKey(api.pool, api.config, tenant.user.id, ['event_definition:write']);
    expect((await api.request('PATCH', path('event_definitions', `${eventId}/`), writer, { description: 'by writer' })).status).toBe(200);
  });
});
