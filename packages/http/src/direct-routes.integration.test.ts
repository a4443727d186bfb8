import { startProbe } from './probe-fixture.js';
import type { ServiceRuntime } from './service-runtime.js';

/**
 * A direct route (the SDK hot paths, served ahead of Express) and an Express route answer the
 * same path, HEAD, 405 and OPTIONS rules: which of the two a service declares a route as must
 * not show in its answers.
 */
let runtime: ServiceRuntime;
let url: string;

beforeAll(async () => {
  runtime = await startProbe({
    direct: [{ paths: ['/flags'], methods: ['GET', 'POST'], handle: async ({ res }) => void res.setHeader('content-type', 'application/json').end('{"served":"direct"}') }],
    routes: (app) => {
      app.get('/things', (_req, res) => void res.json({ served: 'express' }));
      app.post('/things', (_req, res) => void res.json({ served: 'express' }));
    },
  });
  url = `http://127.0.0.1:${runtime.port}`;
});
afterAll(() => runtime.shutdown('test'));

const answer = async (method: string, path: string) => {
  const response = await fetch(`${url}${path}`, { method, body: method === 'POST' ? '{}' : undefined });
  return { status: response.status, allow: response.headers.get('allow'), body: await response.text() };
};

describe.each([
  ['direct', '/flags'],
  ['express', '/things'],
])('a %s route', (kind, path) => {
  it('matches whatever the letter case, with or without a trailing slash', async () => {
    for (const variant of [path, `${path}/`, path.toUpperCase(), `${path.toUpperCase()}/`]) {
      expect(await answer('GET', variant)).toMatchObject({ status: 200, body: `{"served":"${kind}"}` });
      expect(await answer('POST', variant)).toMatchObject({ status: 200, body: `{"served":"${kind}"}` });
    }
  });

  it('answers HEAD as GET without a body, 405 with Allow for another method, and OPTIONS with Allow', async () => {
    expect(await answer('HEAD', path)).toEqual({ status: 200, allow: null, body: '' });
    const refused = await answer('DELETE', path);
    expect(refused).toMatchObject({ status: 405, allow: 'GET, HEAD, POST' });
    expect(JSON.parse(refused.body)).toMatchObject({ type: 'invalid_request', code: 'method_not_allowed' });
    expect(await answer('OPTIONS', path)).toEqual({ status: 204, allow: 'GET, HEAD, POST, OPTIONS', body: '' });
  });

  it('leaves a longer path to the 404', async () => {
    const missing = await answer('GET', `${path}/more`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ type: 'invalid_request', code: 'not_found' });
  });
});
