import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { jest } from '@jest/globals';
import { startSdkServices, type SdkService } from './sdk-services.js';

/**
 * Capture and decide read SDK requests through one edge (@tributary/sdk-edge): the same bad
 * body gets the same answer from both, and browsers get the same CORS headers from both.
 */
let services: Awaited<ReturnType<typeof startSdkServices>>;
let both: [string, SdkService][];

beforeAll(async () => {
  services = await startSdkServices();
  both = [
    ['/capture/', services.capture],
    ['/flags/?v=2', services.decide],
  ];
});

afterAll(async () => {
  await services.close();
});

async function answer(service: SdkService, path: string, init: RequestInit) {
  const response = await fetch(`${service.url}${path}`, init);
  return { status: response.status, body: (await response.json()) as unknown };
}

const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

const BAD_BODIES: [string, RequestInit][] = [
  ['malformed JSON', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"distinct_id": ' }],
  ['bad base64', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'eyJhIjo=?!' }],
  ['bad gzip', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2, 3]) }],
  ['truncated gzip', { method: 'POST', headers: { 'content-type': 'application/json' }, body: gzipSync('{"token":"phc_x","distinct_id":"a"}').subarray(0, 12) }],
  ['JSON nested too deep', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"token":"phc_x","distinct_id":"a","properties":{"x":${deep(200)}}}` }],
  ['a form without its data field', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'compression=base64' }],
  ['an XML body', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<event name="x"/>' }],
  ['no payload at all', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' }],
];

describe('the SDK edge', () => {
  it.each(BAD_BODIES)('answers %s alike from capture and decide', async (_what, init) => {
    const [fromCapture, fromDecide] = await Promise.all(both.map(([path, service]) => answer(service, path, init)));
    expect(fromCapture!.status).toBeGreaterThanOrEqual(400);
    expect(fromCapture!.status).toBeLessThan(500);
    expect(fromDecide).toEqual(fromCapture);
  });

  it('refuses a body past the limit with a 413 in both, each naming its own limit', async () => {
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(3 * 1024 * 1024) };
    for (const [path, service] of both) {
      const { status, body } = await answer(service, path, init);
      expect({ status, code: (body as { code: string }).code }).toEqual({ status: 413, code: 'payload_too_large' });
    }
  });

  it("counts a request the client aborted as the client's (499), never as a server error, in both", async () => {
    for (const [path, service] of both) {
      const errors = jest.spyOn(service.logger, 'error');
      const warnings = jest.spyOn(service.logger, 'warn');
      const { port } = new URL(service.url);
      const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '1000' } });
      req.on('error', () => undefined);
      req.write('{"distinct_id":');
      const served = new Promise<void>((resolve) => service.runtime.server.once('request', (_r, res) => res.once('close', () => setTimeout(resolve, 50))));
      await new Promise((resolve) => setTimeout(resolve, 50));
      req.destroy();
      await served;
      const counted = await service.runtime.metrics.getSingleMetricAsString('tributary_http_requests_total');
      expect(counted).toMatch(/status="499"/);
      expect(errors).not.toHaveBeenCalled();
      expect(warnings).not.toHaveBeenCalled();
      errors.mockRestore();
      warnings.mockRestore();
    }
  });

  it('sends the same CORS headers to a preflight and to an actual request', async () => {
    const origin = 'https://shop.example';
    const corsHeaders = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary'));
    const preflight = { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } };
    const actual = { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: JSON.stringify({ token: 'phc_unknown', distinct_id: 'a', event: 'e' }) };
    for (const init of [preflight, actual]) {
      const [fromCapture, fromDecide] = await Promise.all(both.map(([path, service]) => fetch(`${service.url}${path}`, init)));
      expect(fromDecide!.status).toBe(fromCapture!.status);
      expect(corsHeaders(fromDecide!.headers)).toEqual(corsHeaders(fromCapture!.headers));
      expect(fromCapture!.headers.get('access-control-allow-origin')).toBe(origin);
      expect(fromCapture!.headers.get('access-control-allow-credentials')).toBe('true');
    }
  });
});
