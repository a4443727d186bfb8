import { ControlPlaneStore } from '@tributary/control-plane';
import { createKey, createPool, createTestTenant, testConfig, waitFor, type TestTenant } from '@tributary/test-support';

/**
 * The status page's charts against the running stack: the api samples the services' counters
 * every 15 s, so events sent through capture show as a rate within a couple of samples.
 */
const config = testConfig();
const front = config.publicUrl.replace(/\/$/, '');
const pool = createPool(config, { max: 2 });
let tenant: TestTenant;

type History = { interval_seconds: number; series: { name: string; points: { at: number; perSecond: number }[] }[] };
const history = async (key: string) => fetch(`${front}/api/status/history/`, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  await new ControlPlaneStore(pool, config.apiKeyPepper).setInstanceOperator(tenant.user.id, true);
});
afterAll(() => pool.end());

describe('GET /api/status/history/', () => {
  it("answers the last hour's rates of the four charted counters, and events sent through capture show as a rate", async () => {
    const sentAt = Date.now();
    const batch = Array.from({ length: 50 }, (_, i) => ({ event: 'history probe', distinct_id: `probe-${i}`, properties: {} }));
    expect((await fetch(`${front}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: tenant.project.api_token, batch }) })).status).toBe(200);

    const answer = await waitFor(
      async () => {
        const response = await history(tenant.personalApiKey);
        expect(response.status).toBe(200);
        const body = (await response.json()) as History;
        const accepted = body.series.find((s) => s.name === 'capture_events_accepted')!;
        return accepted.points.some((p) => p.at > sentAt && p.perSecond > 0) ? body : undefined;
      },
      { what: 'a sample after the batch with capture accepting events', timeoutMs: 60_000, intervalMs: 2_000 },
    );
    expect(answer.interval_seconds).toBe(15);
    expect(answer.series.map((s) => s.name)).toEqual(['capture_events_accepted', 'ingest_events_written', 'decide_requests', 'http_errors']);
    const points = answer.series[0]!.points;
    expect(points.length).toBeLessThanOrEqual(240);
    expect(points.map((p) => p.at)).toEqual([...points.map((p) => p.at)].sort((a, b) => a - b));
    expect(points.every((p) => p.at > Date.now() - 3_700_000)).toBe(true);
  }, 90_000);

  it("is refused in the one error shape to an operator's narrow key and to an unlimited key of anyone else, as the status report is", async () => {
    const narrow = await createKey(pool, config, tenant.user.id, ['query:read']);
    const response = await history(narrow);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual(expect.objectContaining({ type: expect.any(String), code: 'instance_operator_required', detail: expect.stringMatching(/instance operator/) }));
    expect((await history((await createTestTenant(pool, config)).personalApiKey)).status).toBe(403);
    expect((await history('phx_not_a_key')).status).toBe(401);
  });
});
