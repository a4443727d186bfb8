import type { DirectRequest } from './direct-routes.js';
import { startProbe } from './probe-fixture.js';
import type { ServiceRuntime } from './service-runtime.js';

/**
 * A direct route (the SDK hot paths, served without Express) and an Express route answer the
 * same path, HEAD, 404, 405 and OPTIONS rules, all read from the one route table: which of the
 * two a service declares a route as must not show in its answers.
 */
let runtime: ServiceRuntime;
let url: string;
const served = async ({ res }: DirectRequest) => void res.setHeader('content-type', 'application/json').end('{"served":"direct"}');

beforeAll(async () => {
  runtime = await startProbe({
    direct: [
      { paths: ['/flags'], methods: ['GET', 'POST'], handle: served },
      { paths: ['/shared'], methods: ['POST'], handle: served },
    ],
    routes: (app) => {
      app.get('/things', (_req, res) => void res.json({ served: 'express' }));
      app.post('/things', (_req, res) => void res.json({ served: 'express' }));
      app.get('/items/:id', (req, res) => void res.json({ id: req.params.id }));
      app.delete('/shared', (_req, res) => void res.json({ served: 'express' }));
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
  ['a direct route', 'direct', '/flags'],
  ['an Express route', 'express', '/things'],
])('%s', (_name, kind, path) => {
  it('matches whatever the letter case, with or without a trailing slash', async () => {
    for (const variant of [path, `${path}/`, path.toUpperCase(), `${path.toUpperCase()}/`]) {
      expect(await answer('GET', variant)).toMatchObject({ status: 200, body: `{"served":"${kind}"}` });
      expect(await answer('POST', variant)).toMatchObject({ status: 200, body: `{"served":"${kind}"}` });
    }
  });

  it('answers HEAD as GET without a body, 405 with Allow for another method, and OPTIONS with Allow', async () => {
    expect(await answer('HEAD', path)).toEqual({ status: 200, allow: null, body: '' });
    const refused = await answer('PUT', path);
    expect(refused).toMatchObject({ status: 405, allow: 'GET, HEAD, POST' });
    expect(JSON.parse(refused.body)).toMatchObject({ type: 'invalid_request', code: 'method_not_allowed' });
    expect(await answer('OPTIONS', path)).toEqual({ status: 204, allow: 'GET, HEAD, POST, OPTIONS', body: '' });
  });

  it('answers 404 in the one error shape for a longer path, a doubled slash and a percent-encoded letter', async () => {
    for (const missing of [`${path}/more/`, `${path}//`, `/${path.slice(1, 3)}%${path.charCodeAt(3).toString(16)}${path.slice(4)}`]) {
      const answered = await answer('GET', missing);
      expect(answered.status).toBe(404);
      expect(JSON.parse(answered.body)).toMatchObject({ type: 'invalid_request', code: 'not_found' });
    }
  });
});

describe('one table for both kinds of route', () => {
  it("serves a method an Express route declares at a direct route's path, and lists both in Allow", async () => {
    expect(await answer('DELETE', '/shared/')).toMatchObject({ status: 200, body: '{"served":"express"}' });
    expect(await answer('POST', '/Shared')).toMatchObject({ status: 200, body: '{"served":"direct"}' });
    expect(await answer('PUT', '/shared')).toMatchObject({ status: 405, allow: 'POST, DELETE' });
  });

  it('answers a parameter that is not valid percent-encoded UTF-8 with a 400, and goes on serving', async () => {
    const refused = await answer('GET', '/items/%C0%80');
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ type: 'invalid_request', code: 'invalid_path' });
    expect(await answer('PUT', '/items/%C0%80')).toMatchObject({ status: 405, allow: 'GET, HEAD' });
    expect(await answer('GET', '/items/a%2Fb')).toMatchObject({ status: 200, body: '{"id":"a/b"}' });
    expect(await answer('GET', '/items//')).toMatchObject({ status: 404 });
  });
});
