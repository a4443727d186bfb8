import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NAMES, type ServiceName } from '@tributary/config';
import { ControlPlaneStore } from '@tributary/control-plane';
import { createKafka, ensureTopics } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createPool, createTestTenant, freePort, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { runImport } from '../../../packages/cli/src/import/import-command.js';
import { launchChromium, type HeadlessChromium } from '../../capture/test/headless-chromium.js';

/**
 * The five services as operators run them: each its own process started from its main.ts, on
 * free ports, with a topic prefix, consumer group and Redis database of its own. What an
 * operator looks at is checked here: metrics that move with traffic, one log line per request,
 * a quiet start, the status page in a real browser, and an import landing in ClickHouse.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const config = testConfig();
const pool = createPool(config, { max: 2 });
const prefix = `${uniqueName('ops')}_`;
const group = uniqueName('ops-ingest');
// A Redis database of its own keeps this worker off the running system's deletion queue.
const redisUrl = config.redisUrl.replace(/\/\d*$/, '/9');

const processes = new Map<ServiceName, { child: ChildProcess; port: number; lines: string[] }>();
const urlOf = (name: ServiceName) => `http://127.0.0.1:${processes.get(name)!.port}`;
let tenant: TestTenant;
let chromium: HeadlessChromium;

/** Samples of one metric whose labels include `labels`, summed. */
async function metric(service: ServiceName, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${urlOf(service)}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) sum += Number(match[3]);
  }
  return sum;
}

const logLines = (service: ServiceName) => processes.get(service)!.lines.flatMap((l) => {
  try {
    return [JSON.parse(l) as Record<string, any>];
  } catch {
    return [];
  }
});

beforeAll(async () => {
  const admin = createKafka(config, createLogger('ops-test', 'silent'), 'ops-test').admin();
  await admin.connect();
  await ensureTopics(admin, prefix, 2);
  await admin.disconnect();
  tenant = await createTestTenant(pool, config);
  await new ControlPlaneStore(pool, config.apiKeyPepper).setInstanceOperator(tenant.user.id, true);
  const ports = Object.fromEntries(await Promise.all(SERVICE_NAMES.map(async (name) => [name, await freePort()] as const))) as Record<ServiceName, number>;
  const env = {
    ...process.env,
    TRIBUTARY_ENV: 'test',
    LOG_LEVEL: 'info',
    KAFKA_TOPIC_PREFIX: prefix,
    INGEST_CONSUMER_GROUP: group,
    REDIS_URL: redisUrl,
    CAPTURE_KAFKA_PRODUCERS: '1',
    ...Object.fromEntries(SERVICE_NAMES.map((name) => [`${name.toUpperCase()}_PORT`, String(ports[name])])),
  };
  for (const name of SERVICE_NAMES) {
    const child = spawn(process.execPath, ['--import', 'tsx', `services/${name}/src/main.ts`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let rest = '';
    const collect = (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    processes.set(name, { child, port: ports[name], lines });
  }
  for (const name of SERVICE_NAMES) {
    await waitFor(async () => (await fetch(`${urlOf(name)}/_ready`)).ok, { timeoutMs: 120_000, intervalMs: 500, what: `${name} to be ready (log: ${processes.get(name)!.lines.slice(-5).join(' | ')})` });
  }
  chromium = await launchChromium();
}, 240_000);

afterAll(async () => {
  await chromium?.close();
  await Promise.all(
    [...processes.values()].map(({ child }) => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    })),
  );
  await pool.end();
}, 60_000);

const post = (service: ServiceName, route: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${urlOf(service)}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const managed = (route: string, init: RequestInit = {}) =>
  fetch(`${urlOf('api')}${route}`, { ...init, headers: { authorization: `Bearer ${tenant.personalApiKey}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

describe('operating Tributary', () => {
  it('starts without kafkajs partitioner or retry warnings', () => {
    for (const name of SERVICE_NAMES) {
      const warnings = logLines(name).filter((l) => l.level >= 40 && l.component === 'kafka');
      expect(warnings).toEqual([]);
      expect(processes.get(name)!.lines.join('\n')).not.toMatch(/partitioner|Limiting retries/i);
    }
  });

  it('counts capture traffic: requests by route and status, events accepted and dropped by reason, Kafka produce latency', async () => {
    const before = await metric('capture', 'tributary_capture_events_accepted_total');
    const batch = Array.from({ length: 5 }, (_, i) => ({ event: 'ops-test', distinct_id: `ops-${i}`, properties: { i } }));
    expect((await post('capture', '/batch/', { api_key: tenant.project.api_token, batch })).status).toBe(200);
    expect((await post('capture', '/capture/', { api_key: tenant.project.api_token, event: 'no distinct id' })).status).toBe(200);
    expect((await post('capture', '/capture/', { api_key: 'phc_nobody', event: 'e', distinct_id: 'd' })).status).toBe(401);
    expect(await metric('capture', 'tributary_capture_events_accepted_total')).toBe(before + 5);
    expect(await metric('capture', 'tributary_capture_events_dropped_total', { reason: 'missing_distinct_id' })).toBeGreaterThanOrEqual(1);
    expect(await metric('capture', 'tributary_capture_events_dropped_total', { reason: 'invalid_api_key' })).toBeGreaterThanOrEqual(1);
    expect(await metric('capture', 'tributary_http_requests_total', { route: '/batch', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(await metric('capture', 'tributary_http_requests_total', { route: '/capture', status: '401' })).toBeGreaterThanOrEqual(1);
    expect(await metric('capture', 'tributary_http_request_duration_seconds_count', { route: '/batch' })).toBeGreaterThanOrEqual(1);
    expect(await metric('capture', 'tributary_kafka_produce_duration_seconds_count', { outcome: 'acknowledged' })).toBeGreaterThanOrEqual(1);
    expect(await metric('capture', 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(await metric('capture', 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
  });

  it('counts ingest: events written, events per second and consumer lag per partition', async () => {
    await waitFor(async () => (await metric('ingest', 'tributary_ingest_events_total')) >= 5, { what: 'ingest to write the events' });
    const lagText = await (await fetch(`${urlOf('ingest')}/metrics`)).text();
    expect(lagText).toMatch(new RegExp(`tributary_ingest_consumer_lag\\{topic="${prefix}events_realtime",partition="0"`));
    expect(lagText).toMatch(/tributary_ingest_events_per_second/);
  });

  it('counts decide: flag evaluations and cache hits', async () => {
    expect((await managed(`/api/projects/${tenant.project.id}/feature_flags/`, { method: 'POST', body: JSON.stringify({ key: 'ops-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }) })).status).toBe(201);
    // Decide runs a worker per core, each with its own cache, and /metrics sums them: one request
    // more than there are workers reaches some worker a second time, which is a hit.
    const requests = availableParallelism() + 1;
    for (let i = 0; i < requests; i++) expect((await post('decide', '/decide/?v=3', { api_key: tenant.project.api_token, distinct_id: 'ops-0' })).status).toBe(200);
    expect(await metric('decide', 'tributary_decide_flag_evaluations_total', { enabled: 'true' })).toBeGreaterThanOrEqual(requests);
    expect(await metric('decide', 'tributary_decide_cache_lookups_total', { cache: 'flag_definitions', outcome: 'hit' })).toBeGreaterThanOrEqual(1);
    expect(await metric('decide', 'tributary_decide_cache_lookups_total', { cache: 'person_properties' })).toBeGreaterThanOrEqual(2);
    expect(await metric('decide', 'tributary_decide_cache_lookups_total', { cache: 'person_copies' })).toBeGreaterThanOrEqual(requests);
  });

  it('counts the worker queue by state, and api and worker requests', async () => {
    expect(await fetch(`${urlOf('worker')}/_ready`).then((r) => r.status)).toBe(200);
    const text = await (await fetch(`${urlOf('worker')}/metrics`)).text();
    expect(text).toMatch(/tributary_worker_queue_jobs\{queue="event-deletions",state="delayed"/);
    expect(text).toMatch(/tributary_worker_jobs_total/);
    expect(await metric('worker', 'tributary_http_requests_total', { route: '/_ready' })).toBeGreaterThanOrEqual(1);
    expect(await metric('api', 'tributary_http_requests_total', { route: '/api/projects/:project_id/feature_flags', status: '201' })).toBe(1);
  });

  it('logs one line per request with method, route, status, ms and the request id it echoes', async () => {
    const response = await managed(`/api/environments/${tenant.project.id}/persons/?limit=5`, { headers: { 'x-request-id': 'ops-test-request-1' } });
    expect(response.headers.get('x-request-id')).toBe('ops-test-request-1');
    // An SDK route's successful answers are logged at debug only; its errors at info.
    const refused = await post('capture', '/capture/', { api_key: 'phc_not_a_project_key', event: 'e', distinct_id: 'd' });
    expect(refused.status).toBe(401);
    const generated = refused.headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    // Lines reach stdout in blocks, at most LOG_FLUSH_INTERVAL_MS after they are logged.
    await waitFor(async () => logLines('capture').some((l) => l.req_id === generated && l.status === 401 && l.level === 30), { what: 'the capture log line' });
    await waitFor(async () => logLines('api').some((l) => l.req_id === 'ops-test-request-1'), { what: 'the api log line' });
    const line = logLines('api').filter((l) => l.req_id === 'ops-test-request-1');
    expect(line).toEqual([expect.objectContaining({ level: 30, msg: 'request', method: 'GET', route: '/api/environments/:project_id/persons', status: 200, ms: expect.any(Number) })]);
  });

  it('imports an export through /batch/ as a historical migration, and the events arrive', async () => {
    const dir = path.join(root, '.tributary', 'test-artifacts');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${prefix}export.ndjson`);
    writeFileSync(file, Array.from({ length: 300 }, (_, i) => JSON.stringify({ event: 'imported', distinct_id: `imp-${i % 10}`, properties: { i }, timestamp: '2023-06-01T00:00:00Z' })).join('\n'));
    const before = await metric('ingest', 'tributary_ingest_events_total');
    const result = await runImport({ file, project: tenant.project.id, apiKey: tenant.project.api_token, url: urlOf('capture'), batchSize: 100, resume: false, dryRun: false });
    expect(result).toMatchObject({ events: 300, invalid: 0 });
    expect(await metric('capture', 'tributary_capture_events_accepted_total', { historical: 'true' })).toBeGreaterThanOrEqual(300);
    await waitFor(async () => (await metric('ingest', 'tributary_ingest_events_total')) >= before + 300, { what: 'the imported events to be written' });
  });

  it("reports each service, lag, throughput and the deletion queue at /api/status/, for an instance operator's all-access key only", async () => {
    const report = (await (await managed('/api/status/')).json()) as any;
    expect(report.services.map((s: { name: string; healthy: boolean; ready: boolean }) => [s.name, s.healthy, s.ready])).toEqual(SERVICE_NAMES.map((name) => [name, true, true]));
    expect(report.consumerLag).toMatchObject({ ok: true, value: { group } });
    expect(report.events.ok).toBe(true);
    expect(report.events.value.lastHour).toBeGreaterThanOrEqual(5);
    expect(report.deadLetters).toMatchObject({ ok: true, value: { topic: `${prefix}events_dead_letter` } });
    expect(report.deletions).toMatchObject({ ok: true, value: { queued: expect.any(Number), nextRun: expect.stringMatching(/T05:00:00\.000Z$/) } });
    const narrow = await fetch(`${urlOf('api')}/api/status/`, { headers: { authorization: `Bearer ${await limitedKey()}` } });
    expect(narrow.status).toBe(403);
    const stranger = await createTestTenant(pool, config);
    expect((await fetch(`${urlOf('api')}/api/status/`, { headers: { authorization: `Bearer ${stranger.personalApiKey}` } })).status).toBe(403);
    expect((await fetch(`${urlOf('api')}/api/status/`)).status).toBe(401);
  });

  it('shows the status page in a browser without an error, and says so when the key is wrong', async () => {
    const page = await chromium.browser.newPage();
    await page.setViewport({ width: 1100, height: 1000 });
    await page.goto(`${urlOf('api')}/status#key=${tenant.personalApiKey}`);
    await page.waitForFunction("['ok', 'error'].includes(document.body.dataset.state)", { timeout: 30_000 });
    const dir = path.join(root, '.tributary', 'test-artifacts');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, 'status-page.png'), fullPage: true });
    const problems = await page.$$eval('.error', (nodes) => nodes.map((n) => n.textContent));
    expect(problems).toEqual([]);
    expect(await page.evaluate('document.body.dataset.state')).toBe('ok');
    expect(await page.evaluate('location.hash')).toBe('');
    const text = String(await page.evaluate('document.body.innerText'));
    for (const expected of ['capture', 'ingest', 'worker', 'events, last minute', 'consumer lag', 'dead letters', 'next deletion batch']) expect(text).toContain(expected);

    await page.evaluate("sessionStorage.setItem('tributary-key', 'phx_wrong')");
    await page.reload();
    await page.waitForFunction("document.body.dataset.state === 'error'", { timeout: 15_000 });
    expect(await page.$$eval('.error', (nodes) => nodes.map((n) => n.textContent))).toEqual([expect.stringMatching(/invalid/i)]);
    await page.close();
  });
});

async function limitedKey(): Promise<string> {
  const { createKey } = await import('@tributary/test-support');
  return createKey(pool, config, tenant.user.id, ['query:read']);
}
