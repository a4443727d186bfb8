import { createKey, createMember, createTestTenant, type TestTenant } from '@tributary/test-support';
import { jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { QueryService } from '../src/query/query-service.js';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const dashboardsPath = (prefix: 'projects' | 'environments' = 'environments') => `/api/${prefix}/${tenant.project.id}/dashboards/`;
const fromTemplate = (body: unknown, key = tenant.personalApiKey) => api.request('POST', `${dashboardsPath()}create_from_template_json/`, key, body);

const trendsQuery = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }] } };
const template = () => ({
  template_name: 'Product analytics',
  dashboard_description: 'Traffic at a glance',
  dashboard_filters: { date_from: '-30d' },
  tags: ['growth'],
  tiles: [
    { type: 'INSIGHT', name: 'Pageviews', description: 'All page views', query: trendsQuery, layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } }, color: 'blue' },
    { type: 'INSIGHT', name: 'Signups', filters: { insight: 'TRENDS', events: [{ id: 'signed up' }] }, layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } } },
  ],
});

const insightsLive = async (ids: number[]) =>
  (await api.pool.query<{ id: number; deleted: boolean }>('SELECT id, deleted FROM insights WHERE id = ANY($1) ORDER BY id', [ids])).rows.map((r) => !r.deleted);

const setup = useApi();
beforeAll(() => ({ api, tenant } = setup));

describe('create_from_template_json', () => {
  it('creates the dashboard, one insight per tile and the tiles, and answers 200 with the dashboard', async () => {
    const { status, body } = await fromTemplate({ template: template() });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: expect.any(Number),
      name: 'Product analytics',
      description: 'Traffic at a glance',
      pinned: false,
      deleted: false,
      creation_mode: 'template',
      filters: { date_from: '-30d' },
      tags: ['growth'],
      restriction_level: 21,
      user_access_level: 'editor',
      created_by: { id: tenant.user.id, uuid: tenant.user.uuid, email: tenant.user.email },
    });
    expect(body.tiles).toEqual([
      expect.objectContaining({
        id: expect.any(Number),
        layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
        color: 'blue',
        insight: expect.objectContaining({ id: expect.any(Number), short_id: expect.stringMatching(/^[A-Za-z0-9]{8}$/), name: 'Pageviews', description: 'All page views', query: trendsQuery, filters: {}, created_at: expect.any(String), dashboards: [body.id] }),
      }),
      expect.objectContaining({
        id: expect.any(Number),
        layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } },
        color: null,
        insight: expect.objectContaining({ name: 'Signups', description: '', query: null, filters: { insight: 'TRENDS', events: [{ id: 'signed up' }] } }),
      }),
    ]);
    for (const prefix of ['projects', 'environments'] as const) {
      const retrieved = await api.request('GET', `${dashboardsPath(prefix)}${body.id}/`, tenant.personalApiKey);
      expect(retrieved.status).toBe(200);
      const { tiles, ...dashboard } = body;
      expect(retrieved.body).toMatchObject(dashboard);
      expect(retrieved.body.tiles.map((t: { id: number }) => t.id)).toEqual(tiles.map((t: { id: number }) => t.id));
    }
  });

  it('takes name, description, pinned, tags and restriction_level from the request over the template', async () => {
    const { status, body } = await fromTemplate({ name: 'Mine', description: 'Own words', pinned: true, tags: [' a ', 'b', 'a'], restriction_level: 37, template: template() });
    expect(status).toBe(200);
    expect(body).toMatchObject({ name: 'Mine', description: 'Own words', pinned: true, tags: ['a', 'b'], restriction_level: 37 });
  });

  it('answers 400 naming the field of a malformed template, and creates nothing', async () => {
    const tiles = template().tiles;
    const cases: [unknown, string | null][] = [
      [{}, 'template'],
      [{ template: { tiles } }, 'template.template_name'],
      [{ template: { template_name: 'x' } }, 'template.tiles'],
      [{ template: { template_name: 'x', tiles: 'all' } }, 'template.tiles'],
      [{ template: { template_name: 'x', tiles: [{ query: trendsQuery }] } }, 'template.tiles[0].name'],
      [{ template: { template_name: 'x', tiles: [tiles[0], { name: 'no query' }] } }, 'template.tiles[1].query'],
      [{ template: { template_name: 'x', tiles: [{ ...tiles[0], type: 'TEXT' }] } }, 'template.tiles[0].type'],
      [{ template: { template_name: 'x', tiles: [{ ...tiles[0], layouts: { sm: { x: -1 } } }] } }, 'template.tiles[0].layouts.sm.x'],
      [{ template: { template_name: 'x', tiles: [{ ...tiles[0], query: [] }] } }, 'template.tiles[0].query'],
      [{ template: { ...template(), dashboard_filters: 'none' } }, 'template.dashboard_filters'],
      [{ template: { ...template(), tags: 'growth' } }, 'template.tags'],
      [{ template: { template_name: 'x', tiles: [{ ...tiles[0], name: 'nul\u0000' }] } }, 'template.tiles[0].name'],
      [{ template: template(), restriction_level: 5 }, 'restriction_level'],
      [{ template: template(), pinned: 'yes' }, 'pinned'],
      [{ template: template(), deleted: true }, 'deleted'],
      [{ template: template(), use_template: 'DEFAULT_APP' }, 'use_template'],
      [{ template: template(), use_dashboard: 1 }, 'use_dashboard'],
      [{ use_dashboard: 'one' }, 'use_dashboard'],
      [[template()], null],
      ['{"template": ', null],
    ];
    const before = await api.pool.query('SELECT count(*)::int AS n FROM dashboards WHERE team_id = $1', [tenant.project.id]);
    for (const [body, attr] of cases) {
      const response = await fromTemplate(body);
      expect([response.status, response.body?.attr]).toEqual([400, attr]);
      expect(response.body.type).toBe('invalid_request');
    }
    const after = await api.pool.query('SELECT count(*)::int AS n FROM dashboards WHERE team_id = $1', [tenant.project.id]);
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('use_dashboard copies the tiles of another dashboard, sharing its insights', async () => {
    const source = (await fromTemplate({ template: template() })).body;
    const { status, body } = await fromTemplate({ use_dashboard: source.id, name: 'Copy' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ name: 'Copy', description: source.description, filters: source.filters, tags: source.tags, creation_mode: 'duplicate' });
    expect(body.tiles.map((t: { insight: { id: number } }) => t.insight.id)).toEqual(source.tiles.map((t: { insight: { id: number } }) => t.insight.id));
    expect(body.tiles.map((t: { layouts: unknown }) => t.layouts)).toEqual(source.tiles.map((t: { layouts: unknown }) => t.layouts));
    expect(body.tiles.map((t: { id: number }) => t.id)).not.toEqual(source.tiles.map((t: { id: number }) => t.id));

    const unknown = await fromTemplate({ use_dashboard: 999_999_999 });
    expect([unknown.status, unknown.body.attr]).toEqual([400, 'use_dashboard']);
    const stranger = await createTestTenant(api.pool, api.config);
    const theirs = await api.request('POST', `/api/environments/${stranger.project.id}/dashboards/create_from_template_json/`, stranger.personalApiKey, { template: template() });
    expect((await fromTemplate({ use_dashboard: theirs.body.id })).status).toBe(400);
  });

  it('delete_insights removes only the insights no other live dashboard shows', async () => {
    const source = (await fromTemplate({ template: template() })).body;
    const insightIds: number[] = source.tiles.map((t: { insight: { id: number } }) => t.insight.id);
    const copy = (await fromTemplate({ use_dashboard: source.id })).body;

    expect((await api.request('DELETE', `${dashboardsPath()}${copy.id}/?delete_insights=true`, tenant.personalApiKey)).status).toBe(204);
    expect(await insightsLive(insightIds)).toEqual([true, true]);
    expect((await api.request('GET', `${dashboardsPath()}${source.id}/`, tenant.personalApiKey)).body.tiles).toHaveLength(2);

    const kept = (await fromTemplate({ template: template() })).body;
    expect((await api.request('DELETE', `${dashboardsPath()}${kept.id}/`, tenant.personalApiKey)).status).toBe(204);
    expect(await insightsLive(kept.tiles.map((t: { insight: { id: number } }) => t.insight.id))).toEqual([true, true]);

    const deleted = await api.request('PATCH', `${dashboardsPath()}${source.id}/`, tenant.personalApiKey, { deleted: true, delete_insights: true });
    expect(deleted.status).toBe(200);
    expect(deleted.body.deleted).toBe(true);
    expect(await insightsLive(insightIds)).toEqual([false, false]);
    const live = (await fromTemplate({ template: template() })).body;
    const badFlag = await api.request('DELETE', `${dashboardsPath()}${live.id}/?delete_insights=maybe`, tenant.personalApiKey);
    expect([badFlag.status, badFlag.body.attr]).toEqual([400, 'delete_insights']);
  });
});

describe('dashboards', () => {
  it('lists live dashboards, pinned first, without their tiles', async () => {
    const own = await createTestTenant(api.pool, api.config);
    const create = (body: Record<string, unknown>) =>
      api.request('POST', `/api/projects/${own.project.id}/dashboards/create_from_template_json/`, own.personalApiKey, { template: template(), ...body });
    const a = (await create({ name: 'A' })).body;
    const b = (await create({ name: 'B', pinned: true })).body;
    const gone = (await create({ name: 'C' })).body;
    await api.request('DELETE', `/api/projects/${own.project.id}/dashboards/${gone.id}/`, own.personalApiKey);

    const { status, body } = await api.request('GET', `/api/environments/${own.project.id}/dashboards/?limit=1`, own.personalApiKey);
    expect(status).toBe(200);
    expect(body.count).toBe(2);
    expect(body.results.map((d: { id: number }) => d.id)).toEqual([b.id]);
    expect(body.next).toContain('offset=1');
    expect(body.results[0]).not.toHaveProperty('tiles');
    const second = await api.request('GET', `/api/environments/${own.project.id}/dashboards/?limit=1&offset=1`, own.personalApiKey);
    expect(second.body.results.map((d: { id: number }) => d.id)).toEqual([a.id]);
    expect((await api.request('GET', `/api/environments/${own.project.id}/dashboards/?limit=0`, own.personalApiKey)).status).toBe(400);
  });

  it('PATCH changes name, description, pinned, tags and restriction_level', async () => {
    const created = (await fromTemplate({ template: template() })).body;
    const changes = { name: 'Renamed', description: 'New', pinned: true, tags: ['x'], restriction_level: 37, filters: { date_from: '-7d' } };
    const { status, body } = await api.request('PATCH', `${dashboardsPath('projects')}${created.id}/`, tenant.personalApiKey, changes);
    expect(status).toBe(200);
    // Its insights now sit on a dashboard restricted to collaborators, and say so.
    const restrictedTiles = created.tiles.map((t: any) => ({ ...t, insight: { ...t.insight, effective_restriction_level: 37 } }));
    expect(body).toMatchObject({ ...changes, effective_restriction_level: 37, tiles: restrictedTiles });
    expect((await api.request('GET', `${dashboardsPath()}${created.id}/`, tenant.personalApiKey)).body).toMatchObject(changes);

    for (const [patch, attr] of [
      [{ restriction_level: 30 }, 'restriction_level'],
      [{ name: 7 }, 'name'],
      [{ tags: [''] }, 'tags[0]'],
      [{ description: 'a\u0000' }, 'description'],
    ] as const) {
      const bad = await api.request('PATCH', `${dashboardsPath()}${created.id}/`, tenant.personalApiKey, patch);
      expect([bad.status, bad.body.attr]).toEqual([400, attr]);
    }
  });

  it('DELETE is a soft delete: the dashboard is gone from the API but kept in the database', async () => {
    const created = (await fromTemplate({ template: template() })).body;
    expect((await api.request('DELETE', `${dashboardsPath()}${created.id}/`, tenant.personalApiKey)).status).toBe(204);
    expect((await api.request('GET', `${dashboardsPath()}${created.id}/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('PATCH', `${dashboardsPath()}${created.id}/`, tenant.personalApiKey, { name: 'x' })).status).toBe(404);
    expect((await api.request('DELETE', `${dashboardsPath()}${created.id}/`, tenant.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', dashboardsPath(), tenant.personalApiKey)).body.results.map((d: { id: number }) => d.id)).not.toContain(created.id);
    const row = await api.pool.query('SELECT deleted FROM dashboards WHERE id = $1', [created.id]);
    expect(row.rows).toEqual([{ deleted: true }]);
    expect((await api.request('GET', `${dashboardsPath()}abc/`, tenant.personalApiKey)).status).toBe(404);
  });

  it('needs dashboard:read to read and dashboard:write to change', async () => {
    const created = (await fromTemplate({ template: template() })).body;
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['dashboard:read']);
    expect((await api.request('GET', dashboardsPath(), reader)).status).toBe(200);
    expect((await api.request('GET', `${dashboardsPath()}${created.id}/`, reader)).status).toBe(200);
    for (const response of [
      await fromTemplate({ template: template() }, reader),
      await api.request('PATCH', `${dashboardsPath()}${created.id}/`, reader, { name: 'x' }),
      await api.request('DELETE', `${dashboardsPath()}${created.id}/`, reader),
    ]) {
      expect([response.status, response.body.code]).toEqual([403, 'missing_scope']);
    }
    expect((await api.request('GET', dashboardsPath(), await createKey(api.pool, api.config, tenant.user.id, ['feature_flag:read']))).status).toBe(403);
  });

  it('restriction_level 37 leaves members without an entry of their own viewers; only admins and the creator change it', async () => {
    const member = await createMember(api.pool, api.config, tenant.organizationId);
    const open = (await fromTemplate({ template: template() })).body;
    const path = `${dashboardsPath()}${open.id}/`;
    expect((await api.request('PATCH', path, member.personalApiKey, { name: 'by member' })).status).toBe(200);
    const restrict = await api.request('PATCH', path, member.personalApiKey, { restriction_level: 37 });
    expect(restrict.status).toBe(403);

    expect((await api.request('PATCH', path, tenant.personalApiKey, { restriction_level: 37 })).status).toBe(200);
    const viewed = await api.request('GET', path, member.personalApiKey);
    expect(viewed.body).toMatchObject({ name: 'by member', user_access_level: 'viewer' });
    expect((await api.request('PATCH', path, member.personalApiKey, { name: 'again' })).status).toBe(403);
    expect((await api.request('DELETE', path, member.personalApiKey)).status).toBe(403);

    // A collaborator: an editor entry for the member.
    await api.request('PUT', `${path}access_controls/`, tenant.personalApiKey, { organization_member: member.membershipId, access_level: 'editor' });
    expect((await api.request('PATCH', path, member.personalApiKey, { name: 'as collaborator' })).status).toBe(200);

    await api.request('PUT', `${path}access_controls/`, tenant.personalApiKey, { organization_member: member.membershipId, access_level: 'none' });
    const hidden = await fromTemplate({ use_dashboard: open.id }, member.personalApiKey);
    expect([hidden.status, hidden.body.attr]).toEqual([400, 'use_dashboard']);

    const mine = (await fromTemplate({ template: template(), restriction_level: 37 }, member.personalApiKey)).body;
    expect((await api.request('PATCH', `${dashboardsPath()}${mine.id}/`, member.personalApiKey, { restriction_level: 21 })).status).toBe(200);
  });
});

describe('a dashboard read with results', () => {
  afterEach(() => jest.restoreAllMocks());

  it('computes DASHBOARD_TILE_CONCURRENCY tiles at once (2 by default) and gives them back in the tiles\' order', async () => {
    const events = ['$pageview', 'signed up', 'clicked', 'paid', 'left'];
    const tiles = events.map((event, i) => ({
      type: 'INSIGHT',
      name: event,
      query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event, math: 'total' }] } },
      layouts: { sm: { x: 0, y: i * 5, w: 6, h: 5 } },
    }));
    const { body: dashboard } = await fromTemplate({ template: { ...template(), tiles } });
    // Each query held a moment, so that tiles computed together overlap whatever the machine's speed.
    const run = QueryService.prototype.run;
    let running = 0;
    let most = 0;
    jest.spyOn(QueryService.prototype, 'run').mockImplementation(async function (this: QueryService, ...args: Parameters<QueryService['run']>) {
      most = Math.max(most, ++running);
      try {
        await sleep(100);
        return await run.apply(this, args);
      } finally {
        running--;
      }
    });
    const read = await api.request('GET', `${dashboardsPath()}${dashboard.id}/?refresh=force_blocking`, tenant.personalApiKey);
    expect(read.status).toBe(200);
    expect(most).toBe(api.config.dashboardTileConcurrency);
    expect(most).toBe(2);
    expect(read.body.tiles.map((t: { insight: { name: string } }) => t.insight.name)).toEqual(events);
    for (const tile of read.body.tiles) expect(tile.insight).toMatchObject({ result: expect.any(Array), query_status: null });
  });
});

