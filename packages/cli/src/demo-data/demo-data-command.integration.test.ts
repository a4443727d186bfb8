import { createPool, createTestTenant, testConfig, type TestTenant } from '@tributary/test-support';
import { DEMO_LIB } from './demo-events.js';
import { runDemoData } from './demo-data-command.js';

const config = testConfig();
const front = config.publicUrl.replace(/\/$/, '');
const pool = createPool(config, { max: 2 });
let tenant: TestTenant;

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
});
afterAll(() => pool.end());

async function api(method: string, path: string, body?: unknown, who: TestTenant = tenant): Promise<any> {
  const response = await fetch(`${front}/api/environments/${who.project.id}${path}`, {
    method,
    headers: { authorization: `Bearer ${who.personalApiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.ok).toBe(true);
  return response.json();
}

/** The counts an insight result draws: a trend's `data` and `aggregated_value`, a retention cohort's `count`. */
function drawnCounts(value: unknown, key = ''): number[] {
  if (typeof value === 'number') return ['data', 'count', 'aggregated_value'].includes(key) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((item) => drawnCounts(item, key));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => drawnCounts(v, k));
  return [];
}

describe('tributary demo-data against the running stack', () => {
  it('sends a week of events through capture and makes the template dashboard, whose every tile has numbers', async () => {
    const result = await runDemoData({ url: front, personalApiKey: tenant.personalApiKey, project: tenant.project.id, weeks: 1, users: 20, seed: 3, arrivalTimeoutMs: 90_000 });

    const stored = await api('POST', '/query/', { query: { kind: 'HogQLQuery', query: `SELECT event, count() FROM events WHERE properties.$lib = '${DEMO_LIB}' GROUP BY event` } });
    const byEvent = Object.fromEntries((stored.results as [string, number][]).map(([event, count]) => [event, Number(count)]));
    expect(Object.values(byEvent).reduce((a, b) => a + b, 0)).toBe(result.events);
    expect(byEvent).toEqual(expect.objectContaining({ $pageview: expect.any(Number), $identify: expect.any(Number), 'signed up': expect.any(Number) }));
    const persons = await api('GET', '/persons/?search=example.com');
    expect(persons.results.length).toBeGreaterThan(0);

    const dashboard = await api('GET', `/dashboards/${result.dashboardId}/?refresh=blocking`);
    expect(dashboard.tiles).toHaveLength(6);
    for (const tile of dashboard.tiles) {
      expect({ tile: tile.insight.name, positive: drawnCounts(tile.insight.result).some((n) => n > 0) }).toEqual({ tile: tile.insight.name, positive: true });
    }
  }, 150_000);

  it('is idempotent: a second run sends nothing and keeps the dashboard, so every count is what one run left', async () => {
    const own = await createTestTenant(pool, config);
    const countsNow = async () => ({
      events: Number((await api('POST', '/query/', { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } }, own)).results[0][0]),
      dashboards: (await api('GET', '/dashboards/?limit=1000', undefined, own)).count,
    });
    const run = () => runDemoData({ url: front, personalApiKey: own.personalApiKey, project: own.project.id, weeks: 1, users: 20, seed: 3, arrivalTimeoutMs: 90_000 });
    const first = await run();
    expect(first.sent).toBeGreaterThan(0);
    const afterOne = await countsNow();
    expect(afterOne).toMatchObject({ events: first.events, dashboards: 1 });
    const second = await run();
    // Anything the second run sent would be stored within ingest's insert interval; give it that long to show.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await countsNow()).toEqual(afterOne);
    expect(second).toEqual({ ...first, sent: 0 });
  }, 150_000);
});
