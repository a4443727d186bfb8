import { randomUUID } from 'node:crypto';
import { EVENT_ROW_COLUMNS, createKey, createTestTenant, eventRow, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

/**
 * PostHog's actions (`/actions/`): CRUD in its serializer's shape, deleted by PATCH; matched at
 * query time as `ActionsNode` series and `matchesAction(...)` in HogQL, each only in its project.
 */
let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const actionsPath = (who: TestTenant = tenant, prefix: 'projects' | 'environments' = 'projects') => `/api/${prefix}/${who.project.id}/actions/`;
const create = (body: Record<string, unknown>, who: TestTenant = tenant) => api.request('POST', actionsPath(who), who.personalApiKey, body);
const query = (body: object, who: TestTenant = tenant) => api.request('POST', `/api/environments/${who.project.id}/query/`, who.personalApiKey, { query: body, refresh: 'force_blocking' });
const JAN = { date_from: '2024-01-01', date_to: '2024-01-03' };
const day = (d: number, hour = 12) => `2024-01-0${d} ${hour}:00:00`;
const MARKER = 'other-project-secret';

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  const [own, theirs] = [tenant.project.id, other.project.id];
  const buy = 'button.btn.cta:attr_id="buy"href="/checkout"nth-child="1"text="Buy now";form.order;body';
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
    eventRow(own, 'alice', '$pageview', day(1), { $current_url: 'https://shop.test/pricing', $browser: 'Chrome' }),
    eventRow(own, 'alice', '$autocapture', day(1, 13), { $current_url: 'https://shop.test/pricing' }, { elements_chain: buy }),
    eventRow(own, 'bob', '$pageview', day(2), { $current_url: 'https://shop.test/pricing?ref=ad', $browser: 'Firefox' }),
    eventRow(own, 'bob', '$autocapture', day(2, 13), { $current_url: 'https://shop.test/' }, { elements_chain: 'a:href="/docs"text="Docs";nav' }),
    eventRow(own, 'carol', 'signup', day(3), { plan: 'pro' }),
    // The other project's rows match every action below, and carry the marker.
    eventRow(theirs, 'alice', '$pageview', day(1), { $current_url: 'https://shop.test/pricing', $browser: 'Chrome', secret: MARKER }),
    eventRow(theirs, 'alice', '$autocapture', day(1), { $current_url: 'https://shop.test/pricing', secret: MARKER }, { elements_chain: buy }),
    eventRow(theirs, 'alice', 'signup', day(3), { plan: 'pro', secret: MARKER }),
  ]);
  await replicasHold(api.clickhouse, api.config, [own, theirs]);
});

describe('CRUD in the shape of PostHog\'s ActionSerializer', () => {
  const steps = [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }, { event: 'signup', properties: [{ key: 'plan', value: 'pro', type: 'event' }] }];

  it('creates an action and reads it under both prefixes', async () => {
    const created = await create({ name: 'Saw pricing or signed up', description: 'the funnel top', tags: ['growth', 'growth '], steps });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Saw pricing or signed up',
      description: 'the funnel top',
      tags: ['growth'],
      post_to_slack: false,
      slack_message_format: '',
      deleted: false,
      is_action: true,
      is_calculating: false,
      team_id: tenant.project.id,
      pinned_at: null,
      created_by: { id: tenant.user.id, email: tenant.user.email },
    });
    // Each step in PostHog's ActionStepJSON shape, every field present.
    expect(created.body.steps[1]).toEqual({
      event: 'signup',
      properties: [{ key: 'plan', value: 'pro', type: 'event' }],
      selector: null,
      tag_name: null,
      text: null,
      text_matching: null,
      href: null,
      href_matching: null,
      url: null,
      url_matching: 'contains',
    });
    for (const prefix of ['projects', 'environments'] as const) {
      const { status, body } = await api.request('GET', `${actionsPath(tenant, prefix)}${created.body.id}/`, tenant.personalApiKey);
      expect(status).toBe(200);
      expect(body).toEqual(created.body);
    }
  });

  it('lists live actions newest first, searches by name, and pages', async () => {
    const tag = randomUUID().slice(0, 8);
    const first = await create({ name: `${tag} one` });
    const second = await create({ name: `${tag} two` });
    const { status, body } = await api.request('GET', `${actionsPath()}?search=${tag}`, tenant.personalApiKey);
    expect(status).toBe(200);
    expect(body.count).toBe(2);
    expect(body.results.map((a: { id: number }) => a.id)).toEqual([second.body.id, first.body.id]);
    const page = await api.request('GET', `${actionsPath()}?search=${tag}&limit=1`, tenant.personalApiKey);
    expect(page.body.results).toHaveLength(1);
    expect(page.body.next).toContain('offset=1');
  });

  it('PATCHes fields, deletes by PATCH deleted: true as PostHog does, and has no DELETE', async () => {
    const created = await create({ name: `patched ${randomUUID()}`, steps });
    const path = `${actionsPath()}${created.body.id}/`;
    const renamed = await api.request('PATCH', path, tenant.personalApiKey, { description: 'now', steps: [{ event: 'signup' }] });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: created.body.name, description: 'now', steps: [{ event: 'signup' }] });
    expect((await api.request('DELETE', path, tenant.personalApiKey)).status).toBe(405);
    const deleted = await api.request('PATCH', path, tenant.personalApiKey, { deleted: true });
    expect(deleted.status).toBe(200);
    expect(deleted.body.deleted).toBe(true);
    expect((await api.request('GET', path, tenant.personalApiKey)).status).toBe(404);
    // Its name is free again.
    expect((await create({ name: created.body.name })).status).toBe(201);
  });

  it.each([
    ['no name', {}, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['an unknown URL matching', { name: 'x', steps: [{ url: 'a', url_matching: 'startswith' }] }, 'steps[0].url_matching'],
    ['a property filter with an unknown operator', { name: 'x', steps: [{ properties: [{ key: 'a', value: 1, operator: 'between' }] }] }, 'steps[0].properties[0].operator'],
    ['a URL regular expression that is not one', { name: 'x', steps: [{ url: '(', url_matching: 'regex' }] }, 'steps[0].url'],
    ['a text regular expression ClickHouse cannot run', { name: 'x', steps: [{ event: '$autocapture', text: '(?<=a)b', text_matching: 'regex' }] }, 'steps[0].text'],
    ['a selector this API does not read', { name: 'x', steps: [{ event: '$autocapture', selector: 'a:hover' }] }, 'steps[0].selector'],
    ['steps that are not a list', { name: 'x', steps: { event: 'a' } }, 'steps'],
  ])('refuses %s with a 400 naming the field', async (_case, body, attr) => {
    const { status, body: error } = await create(body);
    expect(status).toBe(400);
    expect(error).toMatchObject({ attr });
  });

  it('refuses a second live action of the same name', async () => {
    const name = `unique ${randomUUID()}`;
    const first = await create({ name });
    const again = await create({ name });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ attr: 'name', code: 'unique', detail: expect.stringContaining(`ID ${first.body.id}`) });
    // Sent at once, both may pass the check: the unique index decides, and the loser is the same 400, never a 500.
    const raced = `raced ${randomUUID()}`;
    const statuses = (await Promise.all(Array.from({ length: 4 }, () => create({ name: raced })))).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 400, 400, 400]);
  });

  it('needs action:read to read and action:write to write', async () => {
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['action:read']);
    expect((await api.request('GET', actionsPath(), reader)).status).toBe(200);
    const refused = await api.request('POST', actionsPath(), reader, { name: 'nope' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("'action:write'");
  });
});

describe("another project's actions are never visible nor usable", () => {
  let theirs: { id: number; name: string };
  beforeAll(async () => {
    const created = await create({ name: `theirs ${randomUUID()}`, steps: [{ event: '$pageview' }] }, other);
    theirs = created.body;
  });

  it('is not listed, read, nor changed through this project', async () => {
    const listed = await api.request('GET', `${actionsPath()}?limit=1000`, tenant.personalApiKey);
    expect(listed.body.results.map((a: { id: number }) => a.id)).not.toContain(theirs.id);
    expect((await api.request('GET', `${actionsPath()}${theirs.id}/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('PATCH', `${actionsPath()}${theirs.id}/`, tenant.personalApiKey, { name: 'taken' })).status).toBe(404);
    expect((await api.request('GET', `${actionsPath(other)}${theirs.id}/`, other.personalApiKey)).body.name).toBe(theirs.name);
  });

  it('is refused by id in an ActionsNode and a retention entity, and by name or id in matchesAction, as one that does not exist', async () => {
    const answers = [
      await query({ kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id: theirs.id }], dateRange: JAN }),
      await query({ kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'ActionsNode', id: theirs.id }], dateRange: JAN }),
      await query({ kind: 'RetentionQuery', retentionFilter: { targetEntity: { type: 'actions', id: theirs.id } }, dateRange: JAN }),
      await query({ kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE matchesAction('${theirs.name}')` }),
      await query({ kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE matchesAction(${theirs.id})` }),
    ];
    for (const { status, text } of answers) {
      expect(status).toBe(400);
      expect(text).toMatch(new RegExp(`action ${theirs.id} does not exist in this project|project has no action`));
    }
  });
});

describe('actions in queries count the events their steps match', () => {
  const count = async (condition: string) => {
    const { status, body } = await query({ kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE ${condition}` });
    expect([status, body.detail]).toEqual([200, undefined]);
    return body.results[0][0];
  };
  const action = async (steps: object[]) => (await create({ name: `matching ${randomUUID()}`, steps })).body as { id: number; name: string };

  it.each([
    ['the URL contains', [{ event: '$pageview', url: '/pricing' }], 2],
    ['the URL is exactly', [{ event: '$pageview', url: 'https://shop.test/pricing', url_matching: 'exact' }], 1],
    ['the URL matches a regular expression', [{ url: '\\?ref=', url_matching: 'regex' }], 1],
    ['an autocapture selector, an element around the clicked one', [{ event: '$autocapture', selector: 'form.order button#buy' }], 1],
    ['an autocapture text contains, href exactly', [{ event: '$autocapture', text: 'buy', text_matching: 'contains', href: '/checkout' }], 1],
    ['an autocapture tag name', [{ event: '$autocapture', tag_name: 'a' }], 1],
    ['a property', [{ event: 'signup', properties: [{ key: 'plan', value: 'pro' }] }], 1],
    ['any of two steps', [{ event: 'signup' }, { event: '$pageview', properties: [{ key: '$browser', value: 'firefox' }] }], 2],
  ])('%s', async (_case, steps, expected) => {
    const { name, id } = await action(steps);
    expect(await count(`matchesAction('${name}')`)).toBe(expected);
    expect(await count(`matchesAction(${id})`)).toBe(expected);
  });

  it('an unknown action is a 400 naming it', async () => {
    const { status, body } = await query({ kind: 'HogQLQuery', query: "SELECT count() FROM events WHERE matchesAction('no such action')" });
    expect(status).toBe(400);
    expect(body.detail).toContain('"no such action"');
  });

  it('an ActionsNode series counts as the EventsNode with the same conditions does, in each insight kind', async () => {
    const { id, name } = await action([{ event: '$pageview', url: '/pricing', properties: [{ key: '$browser', value: 'chrome' }] }]);
    const events = { kind: 'EventsNode', event: '$pageview', properties: [{ key: '$current_url', operator: 'icontains', value: '/pricing' }, { key: '$browser', value: 'chrome' }] };
    const actions = { kind: 'ActionsNode', id };
    const kinds = (series: object) => [
      { kind: 'TrendsQuery', series: [series], dateRange: JAN },
      { kind: 'StickinessQuery', series: [series], dateRange: JAN },
      { kind: 'LifecycleQuery', series: [series], dateRange: JAN },
      { kind: 'FunnelsQuery', series: [series, { kind: 'EventsNode', event: '$autocapture' }], dateRange: JAN },
      { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: null }, { kind: 'EventsNode', event: '$autocapture' }], funnelsFilter: { exclusions: [{ ...series, funnelFromStep: 0, funnelToStep: 1 }] }, dateRange: JAN },
    ];
    const [withEvents, withActions] = [kinds(events), kinds(actions)];
    for (const [i, request] of withActions.entries()) {
      const [a, e] = [await query(request), await query(withEvents[i]!)];
      expect([a.status, a.body.detail]).toEqual([200, undefined]);
      const numbers = (results: any[]) => JSON.stringify(results.flat().map((r) => r.data ?? r.count));
      expect(numbers(a.body.results)).toEqual(numbers(e.body.results));
    }
    const trends = await query(withActions[0]!);
    expect(trends.body.results[0]).toMatchObject({ label: name, count: 1, action: { id, type: 'actions', name } });
    const retention = await query({ kind: 'RetentionQuery', retentionFilter: { targetEntity: { type: 'actions', id }, returningEntity: { type: 'actions', id }, totalIntervals: 3 }, dateRange: { date_to: '2024-01-03' } });
    expect(retention.status).toBe(200);
    expect(retention.body.results[0].values[0].count).toBe(1);
  });

  it('a cached answer is not reused once the action changed', async () => {
    const { id } = await action([{ event: 'signup' }]);
    const ask = () => api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: { kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id }], dateRange: JAN }, refresh: 'blocking' });
    expect((await ask()).body.results[0].count).toBe(1);
    expect((await ask()).body.is_cached).toBe(true);
    await api.request('PATCH', `${actionsPath()}${id}/`, tenant.personalApiKey, { steps: [{ event: '$pageview' }] });
    const after = await ask();
    expect(after.body.is_cached).toBe(false);
    expect(after.body.results[0].count).toBe(2);
  });

  it("answers with the project's rows alone", async () => {
    const { name, id } = await action([{ event: '$autocapture', selector: 'button' }, { event: 'signup' }, { url: 'shop.test' }]);
    const hogql = await query({ kind: 'HogQLQuery', query: `SELECT event, properties.secret FROM events WHERE matchesAction('${name}')` });
    const trends = await query({ kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id }], dateRange: JAN, breakdownFilter: { breakdown: 'secret' } });
    for (const { status, text } of [hogql, trends]) {
      expect(status).toBe(200);
      expect(text).not.toContain(MARKER);
    }
    expect(hogql.body.results).toHaveLength(5);
  });
});
