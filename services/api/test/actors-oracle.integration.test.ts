import { DateTime } from 'luxon';
import { createTestTenant, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';
import { buildFixture, type Fixture } from './insights-oracle/fixture.js';
import { NY, insertFixture, type Zone } from './insights-oracle/cases.js';
import { ACTOR_TABLE, expectedAt, observedAt, pointsOf } from './insights-oracle/actors-points.js';
import { rowsOf } from './insights-oracle/reference.js';

/**
 * Issue 62's actors: the persons behind every point of every insight kind of the oracle's cases
 * (in UTC, and in America/New_York where the oracle asks there too) are as many as the insight's
 * number there (their events add up to it for a count of events), a
 * few are the very persons a plain reference finds in the raw rows, pages cut the list without
 * losing or repeating anyone, and a second project sharing the distinct ids never shows through.
 */

let api: ApiHarness;
let tenant: TestTenant;
let ny: TestTenant;
let fixture: Fixture;
let otherFixture: Fixture;

// Every point of every case is a request of its own: far more than a key's requests a minute.
const setup = useApi({ apiRateLimitPerMinute: 1_000_000 });
beforeAll(async () => {
  ({ api, tenant } = setup);
  const other = await createTestTenant(api.pool, api.config);
  ny = await createTestTenant(api.pool, api.config);
  await api.pool.query('UPDATE projects SET timezone = $1 WHERE id = $2', [NY, ny.project.id]);
  fixture = buildFixture('UTC');
  otherFixture = buildFixture('UTC', { other: true });
  await insertFixture(api.clickhouse, tenant.project.id, fixture);
  await insertFixture(api.clickhouse, ny.project.id, buildFixture(NY));
  await insertFixture(api.clickhouse, other.project.id, otherFixture);
  await replicasHold(api.clickhouse, api.config, [tenant.project.id, ny.project.id, other.project.id]);
});

const queryIn = (zone: Zone) => (body: object) => {
  const project = zone === 'UTC' ? tenant : ny;
  return api.request('POST', `/api/environments/${project.project.id}/query/`, project.personalApiKey, { query: body });
};
const query = queryIn('UTC');
const actors = (source: object, rest: object = {}) => query({ kind: 'ActorsQuery', source, limit: 1000, ...rest });

describe('the persons behind every point are as many as the insight shows there', () => {
  it.each(ACTOR_TABLE)('%s (%s)', async (_name, zone, request) => {
    const ask = queryIn(zone);
    const insight = await ask(request);
    expect(insight.status).toBe(200);
    const foreign = new Set(otherFixture.persons.map((p) => p.id));
    for (const point of pointsOf(request, insight.body.results)) {
      const { status, body } = await ask({ kind: 'ActorsQuery', source: point.source, limit: 1000 });
      expect({ point: point.label, status, error: status === 200 ? undefined : body }).toEqual({ point: point.label, status: 200 });
      expect(observedAt(point, body)).toEqual(expectedAt(point));
      expect(body.hasMore).toBe(false);
      expect(body.results.filter((row: any[]) => foreign.has(row[0].id))).toEqual([]);
    }
  });
});

describe('the persons are those a plain reference finds in the raw rows', () => {
  const localDay = (ms: number) => DateTime.fromMillis(ms, { zone: 'UTC' }).toFormat('yyyy-MM-dd');
  const idsOf = (body: any) => body.results.map((row: any[]) => row[0].id).sort();

  it('the daily active users of a day are the persons with a pageview that day, with their events', async () => {
    const source = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], interval: 'day', dateRange: { date_from: '2024-01-01', date_to: '2024-01-14' } };
    for (const day of ['2024-01-01', '2024-01-03', '2024-01-05', '2024-01-10']) {
      const rows = rowsOf(fixture.world).filter((r) => r.event === '$pageview' && localDay(r.time) === day);
      const counts = new Map<string, number>();
      for (const r of rows) counts.set(r.personId, (counts.get(r.personId) ?? 0) + 1);
      const { body } = await actors({ kind: 'InsightActorsQuery', source, day }, { select: ['id', 'event_count'] });
      expect(new Map(body.results.map((row: [string, number]) => [row[0], row[1]]))).toEqual(counts);
    }
  });

  it('a stickiness bucket holds the persons active on exactly that many days', async () => {
    const source = { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', dateRange: { date_from: '2024-01-01', date_to: '2024-01-10' } };
    const days = new Map<string, Set<string>>();
    for (const r of rowsOf(fixture.world).filter((r) => r.event === '$pageview' && localDay(r.time) >= '2024-01-01' && localDay(r.time) <= '2024-01-10')) {
      days.set(r.personId, (days.get(r.personId) ?? new Set()).add(localDay(r.time)));
    }
    for (const n of [1, 2, 3]) {
      const { body } = await actors({ kind: 'InsightActorsQuery', source, day: n });
      expect(idsOf(body)).toEqual([...days].filter(([, d]) => d.size === n).map(([id]) => id).sort());
    }
  });

  it('a funnel step holds who did the steps in order within the window; its drop-off who stopped before it', async () => {
    const source = { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: 'signup' }, { kind: 'EventsNode', event: 'purchase' }], dateRange: { date_from: '2024-01-01', date_to: '2024-01-31' } };
    const byPerson = new Map<string, { event: string; time: number }[]>();
    for (const r of rowsOf(fixture.world).filter((r) => localDay(r.time) >= '2024-01-01' && localDay(r.time) <= '2024-01-31')) byPerson.set(r.personId, [...(byPerson.get(r.personId) ?? []), r]);
    const window = 14 * 86_400_000;
    const converted = [...byPerson].filter(([, events]) => events.some((s) => s.event === 'signup' && events.some((p) => p.event === 'purchase' && p.time >= s.time && p.time - s.time <= window))).map(([id]) => id);
    const started = [...byPerson].filter(([, events]) => events.some((e) => e.event === 'signup')).map(([id]) => id);
    expect(idsOf((await actors({ kind: 'FunnelsActorsQuery', source, funnelStep: 2 })).body)).toEqual(converted.sort());
    expect(idsOf((await actors({ kind: 'FunnelsActorsQuery', source, funnelStep: -2 })).body)).toEqual(started.filter((id) => !converted.includes(id)).sort());
  });

  it('a person the insight counts without a person row (a deleted mapping) is listed, without properties', async () => {
    const source = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'purchase', math: 'dau' }], interval: 'day', dateRange: { date_from: '2024-01-12', date_to: '2024-01-12' } };
    const { body } = await actors({ kind: 'InsightActorsQuery', source, day: '2024-01-12' });
    expect(body.results).toHaveLength(1);
    expect(body.results[0][0]).toMatchObject({ properties: {}, created_at: null, distinct_ids: [] });
  });
});

describe('paging, columns and search', () => {
  const source = { kind: 'InsightActorsQuery', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], interval: 'month', dateRange: { date_from: '2024-01-01', date_to: '2024-01-31' } }, day: '2024-01-01' };

  it('pages cut the list in order, each person once, and say whether more follow', async () => {
    const all = (await actors(source, { select: ['id'] })).body;
    expect(all.results.length).toBeGreaterThanOrEqual(5);
    const pages: string[] = [];
    for (let offset = 0; offset < all.results.length; offset += 2) {
      const { body } = await query({ kind: 'ActorsQuery', source, select: ['id'], limit: 2, offset });
      expect([body.limit, body.offset, body.hasMore]).toEqual([2, offset, offset + 2 < all.results.length]);
      pages.push(...body.results.map((row: string[]) => row[0]));
    }
    expect(pages).toEqual(all.results.map((row: string[]) => row[0]));
  });

  it('the actor column is the person with its distinct ids and properties; properties.<key> and orderBy read it', async () => {
    const { status, body } = await actors(source, { select: ['actor', 'properties.country', 'event_count'], orderBy: ['event_count DESC'] });
    expect(status).toBe(200);
    expect(body.columns).toEqual(['actor', 'properties.country', 'event_count']);
    const alice = body.results.find((row: any[]) => row[0].distinct_ids.includes('alice'));
    expect(alice[0]).toMatchObject({ distinct_ids: ['alice', 'alice-phone', 'bob-laptop'], properties: { plan: 'pro', country: 'US' }, is_identified: true, type: 'person' });
    expect(alice[1]).toBe('US');
    const counts = body.results.map((row: any[]) => row[2]);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  it('an InsightActorsQuery asked alone answers the first page of the same persons', async () => {
    const alone = await query(source);
    expect(alone.status).toBe(200);
    expect(alone.body.columns).toEqual(['actor', 'event_count']);
    expect(alone.body.results).toEqual((await query({ kind: 'ActorsQuery', source })).body.results);
  });

  it('search finds a person by distinct id or property text, never by another project\'s', async () => {
    const byId = (await actors(source, { search: 'alice-phone' })).body;
    expect(byId.results.map((row: any[]) => row[0].distinct_ids)).toEqual([['alice', 'alice-phone', 'bob-laptop']]);
    expect((await actors(source, { search: 'DE' })).body.results.map((row: any[]) => row[0].properties.country)).toEqual(['DE']);
    expect((await actors(source, { search: 'Leak' })).body.results).toEqual([]);
  });
});

describe("another project's persons never appear, though they share the distinct ids", () => {
  it('in every person of the project, and in a funnel broken down by a person property', async () => {
    const everyone = await query({ kind: 'ActorsQuery', limit: 1000 });
    expect(everyone.status).toBe(200);
    expect(everyone.body.results.map((row: any[]) => row[0].id).sort()).toEqual([...new Set(fixture.persons.map((p) => p.id))].sort());
    expect(everyone.text).not.toContain('Leak');
    const funnel = { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], dateRange: { date_from: '2024-01-01', date_to: '2024-01-31' }, breakdownFilter: { breakdown: 'country', breakdown_type: 'person' } };
    const leak = await actors({ kind: 'FunnelsActorsQuery', source: funnel, funnelStep: 1, funnelStepBreakdown: 'Leak' });
    expect(leak.status).toBe(400);
    const us = await actors({ kind: 'FunnelsActorsQuery', source: funnel, funnelStep: 1, funnelStepBreakdown: 'US' });
    expect(us.status).toBe(200);
    expect(us.text).not.toContain('Leak');
  });
});

describe('a point the insight does not show is a 400 naming it', () => {
  const trends = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', dateRange: { date_from: '2024-01-01', date_to: '2024-01-07' } };
  const funnel = { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], dateRange: { date_from: '2024-01-01', date_to: '2024-01-31' } };
  it.each([
    ['an unknown source kind', { kind: 'InsightActorsQuery', source: { kind: 'EventsQuery', select: ['*'] } }, 'kind'],
    ['an unknown actors source', { kind: 'PersonsNode' }, 'kind'],
    ['funnelStep 0', { kind: 'FunnelsActorsQuery', source: funnel, funnelStep: 0 }, 'funnelStep'],
    ['funnelStep past the last step', { kind: 'FunnelsActorsQuery', source: funnel, funnelStep: 3 }, 'funnelStep'],
    ['funnelStep -1: no step before the first', { kind: 'FunnelsActorsQuery', source: funnel, funnelStep: -1 }, 'funnelStep'],
    ['a funnel as an InsightActorsQuery', { kind: 'InsightActorsQuery', source: funnel }, 'kind'],
    ['a day outside the range', { kind: 'InsightActorsQuery', source: trends, day: '2024-02-01' }, 'day'],
    ['a day that is no date', { kind: 'InsightActorsQuery', source: trends, day: 'yesterday-ish' }, 'day'],
    ['a series the insight lacks', { kind: 'InsightActorsQuery', source: trends, day: '2024-01-02', series: 3 }, 'series'],
    ['a breakdown of an insight not broken down', { kind: 'InsightActorsQuery', source: trends, day: '2024-01-02', breakdown: 'Chrome' }, 'breakdown'],
    ['a lifecycle point without a status', { kind: 'InsightActorsQuery', source: { ...trends, kind: 'LifecycleQuery' }, day: '2024-01-02' }, 'status'],
    ['a stickiness bucket past the range', { kind: 'InsightActorsQuery', source: { ...trends, kind: 'StickinessQuery' }, day: 8 }, 'day'],
    ['a retention cohort past the last', { kind: 'InsightActorsQuery', source: { kind: 'RetentionQuery', retentionFilter: { totalIntervals: 3 } }, interval: 3 }, 'interval'],
  ])('%s', async (_name, source, field) => {
    const { status, body } = await actors(source);
    expect(status).toBe(400);
    expect(JSON.stringify(body)).toContain(field);
  });

  it('a column or order it does not know', async () => {
    const source = { kind: 'InsightActorsQuery', source: trends, day: '2024-01-02' };
    const select = await actors(source, { select: ['email); DROP TABLE x'] });
    expect(select.status).toBe(400);
    expect((await actors(source, { select: ['appearances'] })).status).toBe(400);
    expect((await actors(source, { orderBy: ['properties DESC'] })).status).toBe(400);
    expect((await actors(source, { orderBy: ['constructor'] })).status).toBe(400);
    const inherited = await actors(source, { select: ['properties.__proto__', 'properties.constructor'] });
    expect(inherited.status).toBe(200);
    expect(inherited.body.results.every((row: unknown[]) => row[0] === null && row[1] === null)).toBe(true);
  });
});
