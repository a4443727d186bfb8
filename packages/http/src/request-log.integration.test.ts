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
          handle: async ({ req, res }) => {
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
