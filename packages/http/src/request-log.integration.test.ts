import { request } from 'node:http';
import { jest } from '@jest/globals';
import { createLogger } from '@tributary/logger';
import { badRequest } from './errors.js';
import { startProbe } from './probe-fixture.js';
import type { ServiceRuntime } from './service-runtime.js';

/** Each request's log line as the runtime logs it: its level and status, by request id. */
async function logged(run: (url: string) => Promise<void>): Promise<Map<string, { level: string; status: number; route: string }>> {
  const logger = createLogger('probe', 'debug');
  const lines = new Map<string, { level: string; status: number; route: string }>();
  for (const level of ['debug', 'info', 'error'] as const) {
    jest.spyOn(logger, level).mockImplementation(((line: { req_id?: string; status: number; route: string }, msg?: string) => {
      if (msg === 'request' && line.req_id) lines.set(line.req_id, { level, status: line.status, route: line.route });
      if (msg === 'unhandled error' && line.req_id) lines.set(`${line.req_id} error`, { level, status: 0, route: '' });
    }) as never);
  }
  let runtime: ServiceRuntime | undefined;
  try {
    runtime = await startProbe({
      logger,
      direct: [
        {
          paths: ['/flags'],
          methods: ['POST'],
          handle: async ({ req, res, query }) => {
            if (req.headers['x-echo-query']) return void res.end(JSON.stringify(query));
            if (req.headers['x-fail'] === 'input') throw badRequest('Asked to fail.');
            if (req.headers['x-fail'] === 'bug') throw new Error('a bug');
            if (req.headers['x-slow']) await new Promise((resolve) => setTimeout(resolve, Number(req.headers['x-slow'])));
            if (req.headers['x-fail'] === 'late') {
              res.writeHead(200, { 'content-type': 'application/json' });
              res.write('{');
              throw new Error('a bug after the headers went out');
            }
            res.setHeader('content-type', 'application/json');
            res.end('{}');
          },
        },
      ],
      routes: (app) => app.get('/api/things', (_req, res) => void res.json([])),
    });
    await run(`http://127.0.0.1:${runtime.port}`);
  } finally {
    await runtime?.shutdown('test');
  }
  return lines;
}

test('successful answers on the direct routes (the SDK hot paths) are logged at debug; their errors and every Express request at info', async () => {
  const lines = await logged(async (url) => {
    const send = (path: string, id: string, init: RequestInit = {}) => fetch(`${url}${path}`, { ...init, headers: { ...init.headers, 'x-request-id': id } }).then((r) => r.text());
    await send('/flags', 'sdk-ok', { method: 'POST', body: '{}' });
    await send('/flags', 'sdk-bad', { method: 'POST', body: '{}', headers: { 'x-fail': 'input' } });
    await send('/flags', 'sdk-bug', { method: 'POST', body: '{}', headers: { 'x-fail': 'bug' } });
    await send('/flags', 'sdk-late', { method: 'POST', body: '{}', headers: { 'x-fail': 'late' } }).catch(() => undefined);
    await send('/flags', 'sdk-wrong-method', { method: 'DELETE' });
    await send('/api/things', 'api-ok');
    await send('/_health', 'probe');
    // The client gives up before the answer comes.
    const gone = send('/flags', 'sdk-client-gone', { method: 'POST', body: '{}', headers: { 'x-slow': '300' }, signal: AbortSignal.timeout(50) }).catch(() => undefined);
    await gone;
    await new Promise((resolve) => setTimeout(resolve, 100));
  });
  expect(Object.fromEntries(lines)).toEqual({
    'sdk-ok': { level: 'debug', status: 200, route: '/flags' },
    'sdk-bad': { level: 'info', status: 400, route: '/flags' },
    'sdk-bug': { level: 'info', status: 500, route: '/flags' },
    'sdk-bug error': { level: 'error', status: 0, route: '' },
    // The status went out before the fault: the request's line says 200, at debug, and the
    // error's line, at error, carries the same request id.
    'sdk-late': { level: 'debug', status: 200, route: '/flags' },
    'sdk-late error': { level: 'error', status: 0, route: '' },
    'sdk-wrong-method': { level: 'info', status: 405, route: 'unmatched' },
    'api-ok': { level: 'info', status: 200, route: '/api/things' },
    probe: { level: 'debug', status: 200, route: '/_health' },
    // Logged when the connection closed, with nginx's 499, at info: not a success.
    'sdk-client-gone': { level: 'info', status: 499, route: '/flags' },
  });
});

/** A request whose target is sent as given: fetch drops a fragment and never sends an absolute-form target. */
function rawRequest(url: string, method: string, target: string, headers: Record<string, string>, body = ''): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: target, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a fragment or an absolute-form target is read as the router reads it: the route it names serves it and labels it, the query ends before the fragment, and a target the parser refuses is a 404', async () => {
  let echoed = '';
  let refused = '';
  const lines = await logged(async (url) => {
    await rawRequest(url, 'POST', '/flags#frag', { 'x-request-id': 'sdk-fragment' }, '{}');
    echoed = await rawRequest(url, 'POST', '/flags?v=2#frag', { 'x-request-id': 'sdk-query', 'x-echo-query': '1' }, '{}');
    await rawRequest(url, 'POST', `http://tributary.test/flags?v=2`, { 'x-request-id': 'sdk-absolute' }, '{}');
    await rawRequest(url, 'GET', '/api/things#frag', { 'x-request-id': 'api-fragment' });
    await rawRequest(url, 'GET', 'http://tributary.test/api/things?limit=1', { 'x-request-id': 'api-absolute' });
    // Node's parser takes this target, and the URL parser throws on it: a 404 like any unknown path.
    refused = await rawRequest(url, 'POST', 'http://[::1/flags', { 'x-request-id': 'refused-target' }, '{}');
    await rawRequest(url, 'POST', '/flags', { 'x-request-id': 'after-refused' }, '{}');
  });
  expect(JSON.parse(refused)).toMatchObject({ type: 'invalid_request', code: 'not_found' });
  expect(JSON.parse(echoed)).toEqual({ v: '2' });
  expect(Object.fromEntries(lines)).toEqual({
    'sdk-fragment': { level: 'debug', status: 200, route: '/flags' },
    'sdk-query': { level: 'debug', status: 200, route: '/flags' },
    'sdk-absolute': { level: 'debug', status: 200, route: '/flags' },
    'api-fragment': { level: 'info', status: 200, route: '/api/things' },
    'api-absolute': { level: 'info', status: 200, route: '/api/things' },
    'refused-target': { level: 'info', status: 404, route: 'unmatched' },
    'after-refused': { level: 'debug', status: 200, route: '/flags' },
  });
});
