import http from 'node:http';
import { useApi } from './api-harness.js';

/**
 * What the hostile-input generator (chaos/hostile-input.ts) found in the management API, each a 500
 * (or a crash) before: every one is now a 400 in the error shape, naming the problem.
 */
const setup = useApi();
const api = () => setup.api;
const project = () => `/api/environments/${setup.tenant.project.id}`;
const call = (method: string, path: string, body?: unknown) => api().request(method, path, setup.tenant.personalApiKey, body);
const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

const expectRefused = (response: { status: number; body: any }, attr: string | null, detail: RegExp) => {
  expect(response.status).toBe(400);
  expect(response.body).toEqual({ type: 'invalid_request', code: expect.any(String), detail: expect.stringMatching(detail), attr });
};

describe('hostile input to the management API', () => {
  it('a path parameter that is not valid percent-encoding is a 400, and the service lives on (it crashed the process)', async () => {
    expectRefused(await call('GET', '/api/environments/%C0%80/events/'), null, /percent-encoded/);
    expectRefused(await call('PATCH', `${project()}/feature_flags/%FF%FE/`, { name: 'x' }), null, /percent-encoded/);
    expect((await call('GET', `${project()}/feature_flags/`)).status).toBe(200);
  });

  it('a body that is not JSON is a 415 saying to send JSON (it reached the route as no body: "key is required"); a DELETE ignores it', async () => {
    const send = async (method: string, path: string, contentType: string | null, body: string) => {
      const response = await fetch(`${api().url}${path}`, {
        method,
        headers: { authorization: `Bearer ${setup.tenant.personalApiKey}`, ...(contentType ? { 'content-type': contentType } : {}) },
        body: contentType ? body : new Blob([body]),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    };
    const refused = (type: string) => ({ type: 'invalid_request', code: 'unsupported_media_type', detail: expect.stringContaining(type), attr: null });
    expect(await send('POST', `${project()}/feature_flags/`, 'text/plain', '{"key":"k"}')).toEqual({ status: 415, body: refused('"text/plain"') });
    expect(await send('PATCH', `${project()}/feature_flags/1/`, 'application/x-www-form-urlencoded', 'key=k')).toEqual({ status: 415, body: refused('Content-Type: application/json') });
    expect(await send('POST', `${project()}/cohorts/`, null, 'x'.repeat(100_000))).toEqual({ status: 415, body: refused('no Content-Type') });
    expect((await send('DELETE', `${project()}/feature_flags/999999999/`, 'text/plain', 'x'.repeat(100_000))).status).toBe(404);
  });

  it('a body of another type where no route takes the request is the 404 or 405 that says so, not a 415 about the body (as PostHog)', async () => {
    const send = async (method: string, path: string) => {
      const response = await fetch(`${api().url}${path}`, { method, headers: { authorization: `Bearer ${setup.tenant.personalApiKey}`, 'content-type': 'text/plain' }, body: 'x'.repeat(100_000) });
      return { status: response.status, body: (await response.json()) as { code: string } };
    };
    expect(await send('POST', `${project()}/no_such_resource/?x=1`)).toEqual({ status: 404, body: expect.objectContaining({ code: 'not_found' }) });
    expect(await send('POST', `${project()}/events/`)).toEqual({ status: 405, body: expect.objectContaining({ code: 'method_not_allowed' }) });
    expect((await send('POST', `${project()}/feature_flags/?x=1`)).status).toBe(415);
    // A target the router reads without its fragment is one it routes: a 415 still (it was a 400 "key is required").
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(api().url);
      const request = http.request(
        { host: url.hostname, port: url.port, method: 'POST', path: `${project()}/feature_flags/#x`, headers: { authorization: `Bearer ${setup.tenant.personalApiKey}`, 'content-type': 'text/plain' } },
        (response) => response.resume().on('end', () => resolve(response.statusCode!)),
      );
      request.on('error', reject);
      request.end('{"key":"k"}');
    });
    expect(status).toBe(415);
  });

  it('without a key any body is a 401, as any request without one: of another type (it was a 415), malformed (a 400) or too large (a 413)', async () => {
    for (const [type, body] of [['text/plain', 'x'.repeat(100_000)], ['application/json', '{"key":'], ['application/json', `"${'x'.repeat(2_000_000)}"`]]) {
      const response = await fetch(`${api().url}${project()}/feature_flags/`, { method: 'POST', headers: { 'content-type': type! }, body });
      expect({ status: response.status, body: await response.json() }).toEqual({ status: 401, body: expect.objectContaining({ type: 'authentication_error' }) });
    }
  });

  it('a chunked body that turns out empty is no body, not one of another type (it was a 415)', async () => {
    const url = new URL(`${api().url}${project()}/feature_flags/`);
    // fetch sends an empty stream as Content-Length: 0; a client streaming nothing sends the end of a chunked body.
    const { status, body } = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const request = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${setup.tenant.personalApiKey}`, 'transfer-encoding': 'chunked' } }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) as unknown }));
      });
      request.on('error', reject);
      request.end();
    });
    expect({ status, body }).toEqual({ status: 400, body: { type: 'invalid_request', code: expect.any(String), detail: expect.stringMatching(/key/), attr: 'key' } });
  });

  it('a body nested deeper than 128 levels is a 400 naming where, not a stack overflow', async () => {
    const deep = `{"key":"deep","filters":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    expectRefused(await call('POST', `${project()}/feature_flags/`, deep), expect.stringMatching(/^filters\.a\.a/) as never, /nests deeper than 128/);
    expectRefused(await call('POST', '/api/personal_api_keys/', `{"label":${'['.repeat(200_000)}${']'.repeat(200_000)}}`), expect.stringMatching(/^label/) as never, /nests deeper/);
  });

  it('text Postgres cannot store (U+0000, an unpaired surrogate) is a 400 naming the field, in bodies and query strings', async () => {
    expectRefused(await call('POST', `${project()}/cohorts/`, { name: 'a\u0000b' }), 'name', /U\+0000/);
    expectRefused(await call('POST', `${project()}/feature_flags/`, { key: 'k', name: '\ud800' }), 'name', /unpaired/);
    expectRefused(await call('GET', `${project()}/persons/${q({ search: 'a\u0000' })}`), 'search', /U\+0000/);
    expectRefused(await call('POST', `${project()}/persons/bulk_delete/`, { distinct_ids: ['x\u0000'] }), 'distinct_ids[0]', /U\+0000/);
  });

  it('U+0000 written as a JSON escape inside a query parameter is a 400 too (Postgres refused it, a 500)', async () => {
    expectRefused(await call('POST', `${project()}/persons/bulk_delete/${q({ distinct_ids: '["a\\u0000b"]' })}`, {}), 'distinct_ids[0]', /U\+0000/);
    const properties = JSON.stringify([{ key: 'hostile', type: 'person', operator: 'is_not', value: '\u0000' }]);
    expectRefused(await call('GET', `${project()}/persons/${q({ properties })}`), 'properties[0].value', /U\+0000/);
  });

  it('an offset past what Postgres counts is a 400', async () => {
    expectRefused(await call('GET', `${project()}/cohorts/?offset=100000000000000000000`), 'offset', /must be <=/);
  });

  it('a person regex filter Postgres cannot compile is a 400 naming properties', async () => {
    const properties = JSON.stringify([{ key: 'email', type: 'person', operator: 'regex', value: 'a{300}' }]);
    expectRefused(await call('GET', `${project()}/persons/${q({ properties })}`), 'properties', /Postgres cannot compile/);
  });

  it('events: expressions and filters ClickHouse refuses, or that name Object.prototype, are 400s', async () => {
    const events = (params: Record<string, string>) => call('GET', `${project()}/events/${q(params)}`);
    expectRefused(await events({ where: '["event + 1 > 2"]' }), null, /types of an expression do not fit/);
    expectRefused(await events({ where: '["constructor"]' }), 'where', /Unable to resolve field: constructor/);
    expectRefused(await events({ select: '["toString(1e999)"]' }), 'select', /too large/);
    expectRefused(await events({ where: `["${'('.repeat(1000)}1${')'.repeat(1000)}"]` }), 'where', /nests brackets 1000 deep; at most 20/);
    expectRefused(await events({ after: '-99999999999y' }), 'after', /ISO 8601/);
    expectRefused(await events({ properties: '[{"key":"id","type":"cohort","value":"NaN"}]' }), 'properties', /cohort id/);
    expectRefused(await events({ properties: '[{"key":"p","operator":"regex","value":"(?<name>a)"}]' }), 'properties', /RE2/);
    // A number too large for a double is compared as text rather than rendered as Infinity.
    expect((await events({ properties: '[{"key":"p","operator":"gt","value":"1e999"}]' })).status).toBe(200);
  });

  it('events: an expression nested past what ClickHouse 18.16 can parse is a 400 before it reaches ClickHouse (it killed the server), and queries run on', async () => {
    const events = (params: Record<string, string>) => call('GET', `${project()}/events/${q(params)}`);
    // HogQL's parser is spared these: past 240 operators or 16 NOTs it slows down or overflows its own stack.
    expectRefused(await events({ where: JSON.stringify([`${'1+'.repeat(2000)}1`]) }), 'where', /2000 operators, at most 240/);
    expectRefused(await events({ select: JSON.stringify([`${'not '.repeat(1500)}1`]) }), 'select', /1500 NOTs, at most 16/);
    expect((await events({ where: JSON.stringify([Array.from({ length: 100 }, (_, i) => `event = 'e${i}'`).join(' or ')]) })).status).toBe(200);
  });

  it('events: a where expression that is not a condition is a 400 saying so', async () => {
    // ClickHouse 18.16 names it one way or the other depending on how it plans the filter.
    expectRefused(await call('GET', `${project()}/events/${q({ where: '["lower(event)"]' })}`), null, /not a condition|types of an expression do not fit/);
  });

  it('events: a person_id past what a double holds exactly is a 400, not a Postgres range error (make chaos found it)', async () => {
    const response = await call('GET', `${project()}/events/${q({ person_id: '18446744073709551616' })}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: 'invalid_request', detail: expect.stringMatching(/person_id/) });
  });
});
