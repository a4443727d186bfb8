import { gzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { messageKey, partitionOfKey } from '@tributary/kafka';
import { startCapture, type CaptureHarness } from './capture-harness.js';

let capture: CaptureHarness;

beforeAll(async () => {
  capture = await startCapture({ captureMaxEventBytes: 64 * 1024, captureMaxBatchBytes: 256 * 1024, captureOverflowEventsPerSecond: 1000 });
}, 60_000);

afterAll(async () => {
  await capture.close();
});

const post = (path: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${capture.url}${path}`, { method: 'POST', headers, body });

describe('routes and formats', () => {
  it('accepts every SDK path, with and without the trailing slash', async () => {
    const token = capture.tenant.project.api_token;
    const paths = ['/capture', '/capture/', '/batch', '/batch/', '/e', '/e/', '/i/v0/e', '/i/v0/e/', '/track', '/track/', '/engage', '/engage/'];
    for (const path of paths) {
      const response = await post(path, JSON.stringify({ api_key: token, event: `via ${path}`, distinct_id: 'routes' }));
      expect([path, response.status]).toEqual([path, 200]);
      expect(await response.json()).toEqual({ status: 1 });
    }
    const published = await capture.readEvents(capture.topics.realtime, paths.length);
    expect(published.map(({ event }) => JSON.parse(event.data).event).sort()).toEqual(paths.map((p) => `via ${p}`).sort());
  });

  it('reads gzip by header, by ?compression=gzip-js and by magic bytes, lz64 forms, base64 bodies and GET ?data=', async () => {
    const token = capture.tenant.project.api_token;
    const body = (name: string) => JSON.stringify([{ event: name, distinct_id: 'formats', properties: { token } }]);
    const results = await Promise.all([
      post('/batch/', gzipSync(body('gzip-header')), { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
      post('/e/?compression=gzip-js&ver=1.200.0', gzipSync(body('gzip-js')), { 'content-type': 'text/plain' }),
      post('/e/', gzipSync(body('gzip-magic')), { 'content-type': 'application/octet-stream' }),
      post('/e/', new URLSearchParams({ data: LZString.compressToBase64(body('lz64-form')), compression: 'lz64' }).toString(), { 'content-type': 'application/x-www-form-urlencoded' }),
      post('/e/', Buffer.from(body('base64')).toString('base64'), { 'content-type': 'text/plain' }),
      fetch(`${capture.url}/e/?data=${encodeURIComponent(Buffer.from(body('get-data')).toString('base64'))}`),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('answers CORS preflight for browsers', async () => {
    const response = await fetch(`${capture.url}/e/`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });
});

describe('methods', () => {
  it('answers a method other than GET and POST with 405 and Allow, in the one error shape', async () => {
    const response = await fetch(`${capture.url}/batch/`, { method: 'PUT', body: '{}' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    expect(await response.json()).toMatchObject({ type: 'invalid_request', code: 'method_not_allowed' });
  });
});

describe('stamping and publishing', () => {
  it('keeps a client uuid, assigns UUIDv7 otherwise, stamps now, sent_at, ip and token, on the partition of token:distinct_id', async () => {
    const token = capture.tenant.project.api_token;
    const clientUuid = '0190f3c0-1234-7abc-8def-0123456789ab';
    const response = await post('/batch/', JSON.stringify({
      api_key: token,
      sent_at: '2026-01-01T00:00:00.000Z',
      batch: [
        { event: 'kept', distinct_id: 'stamp', uuid: clientUuid },
        { event: 'assigned', properties: { distinct_id: 'stamp' } },
        { event: 'no distinct id' },
      ],
    }), { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' });
    expect(response.status).toBe(200);
    const all = await capture.readEvents(capture.topics.realtime, 1);
    const mine = all.filter(({ event }) => event.distinct_id === 'stamp');
    expect(mine).toHaveLength(2);
    // One message for the request's events bound for that partition.
    expect(mine[0]!.message).toBe(mine[1]!.message);
    expect(mine.map((p) => p.partition)).toEqual(Array(2).fill(partitionOfKey(messageKey(token, 'stamp'), 2)));
    const [kept, assigned] = mine.map((p) => p.event);
    expect(kept!.uuid).toBe(clientUuid);
    expect(assigned!.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(kept).toMatchObject({ token, sent_at: '2026-01-01T00:00:00.000Z', historical_migration: false, ip: '203.0.113.9' });
    expect(Date.now() - new Date(kept!.now).getTime()).toBeLessThan(60_000);
  });

  it('sends historical_migration batches to the historical topic, in order', async () => {
    const token = capture.tenant.project.api_token;
    const batch = Array.from({ length: 10 }, (_, i) => ({ event: `h${i}`, distinct_id: 'hist' }));
    expect((await post('/batch/', JSON.stringify({ api_key: token, historical_migration: true, batch }))).status).toBe(200);
    const published = await capture.readEvents(capture.topics.historical, 10);
    expect(published.map(({ event }) => JSON.parse(event.data).event)).toEqual(batch.map((e) => e.event));
    expect(published.every(({ event }) => event.historical_migration)).toBe(true);
    expect(new Set(published.map((p) => p.message)).size).toBe(1);
  });

  it('routes a distinct id sending faster than the limit to overflow, spread over its partitions, never a historical batch', async () => {
    const hot = await startCapture({ captureOverflowEventsPerSecond: 3 });
    try {
      const token = hot.tenant.project.api_token;
      const batch = Array.from({ length: 10 }, (_, i) => ({ event: `spike${i}`, distinct_id: 'hot-user' }));
      expect((await fetch(`${hot.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, batch }) })).status).toBe(200);
      expect((await fetch(`${hot.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, historical_migration: true, batch }) })).status).toBe(200);
      const overflow = await hot.readEvents(hot.topics.overflow, 10);
      expect(new Set(overflow.map((p) => p.partition))).toEqual(new Set([0, 1]));
      expect(overflow.every(({ event }) => !event.historical_migration)).toBe(true);
      expect(await hot.readEvents(hot.topics.historical, 10)).toHaveLength(10);
    } finally {
      await hot.close();
    }
  });
});

describe('errors', () => {
  it('answers 400 naming the problem for unparsable bodies and empty batches', async () => {
    const unparsable = await post('/capture/', '{"event": ');
    expect(unparsable.status).toBe(400);
    expect(await unparsable.json()).toMatchObject({ type: 'invalid_request', detail: expect.stringMatching(/not valid JSON/) });
    const empty = await post('/batch/', JSON.stringify({ api_key: capture.tenant.project.api_token, batch: [] }));
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { detail: string }).detail).toMatch(/no events/);
  });

  it('answers 401 for missing, malformed and unknown project keys', async () => {
    for (const body of [{ event: 'e', distinct_id: 'd' }, { api_key: 'phx_personal', event: 'e', distinct_id: 'd' }, { api_key: 'phc_unknown_project', event: 'e', distinct_id: 'd' }]) {
      const response = await post('/capture/', JSON.stringify(body));
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ type: 'authentication_error', detail: expect.any(String) });
    }
  });

  it('drops events without a name or distinct id and still answers 200', async () => {
    const response = await post('/capture/', JSON.stringify({ api_key: capture.tenant.project.api_token, event: 'no id' }));
    expect(response.status).toBe(200);
  });

  it('answers 413 past the limit, measured after decompression, on /batch/ and elsewhere', async () => {
    const token = capture.tenant.project.api_token;
    const big = JSON.stringify({ api_key: token, event: 'big', distinct_id: 'd', properties: { pad: 'x'.repeat(100 * 1024) } });
    expect((await post('/capture/', big)).status).toBe(413);
    expect((await post('/batch/', big)).status).toBe(200);
    const bomb = gzipSync(JSON.stringify({ api_key: token, batch: [{ event: 'e', distinct_id: 'd', properties: { pad: 'y'.repeat(1024 * 1024) } }] }));
    const response = await post('/batch/', bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it('answers 503, never 200, when Kafka cannot take the events', async () => {
    const down = await startCapture({ kafkaProduceTimeoutMs: 1500 }, ['127.0.0.1:1']);
    try {
      const response = await fetch(`${down.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: down.tenant.project.api_token, event: 'e', distinct_id: 'd' }) });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await down.close();
    }
  });
});
