import type { Request, Response } from 'express';
import { createLogger } from '@tributary/logger';
import { errorHandler } from './error-handler.js';
import { badRequest } from './errors.js';

/** The status and body the handler answers `error` with. */
function answer(error: unknown): { status: number; body: unknown } {
  const out = { status: 0, body: undefined as unknown };
  // The handler writes through node's ServerResponse, which Express's response extends.
  const res = {
    headersSent: false,
    statusCode: 0,
    setHeader: () => undefined,
    getHeader: () => undefined,
    end(body: string) {
      out.status = res.statusCode;
      out.body = JSON.parse(body);
    },
  } as unknown as Response;
  errorHandler(createLogger('test', 'silent'))(error, { method: 'GET', path: '/x' } as Request, res, () => undefined);
  return out;
}

/** What Express's router passes on for `/items/%C0%80` when a route has an `:id`. */
function undecodableParam(): URIError {
  const error = new URIError("Failed to decode param '%C0%80'");
  Object.assign(error, { status: 400, statusCode: 400 });
  return error;
}

describe('the one place an error becomes a response', () => {
  it('answers a path parameter that is not valid percent-encoding with a 400 naming it, not a 500', () => {
    expect(answer(undecodableParam())).toEqual({
      status: 400,
      body: { type: 'invalid_request', code: 'invalid_path', detail: "The path is not valid percent-encoded UTF-8: Failed to decode param '%C0%80'.", attr: null },
    });
  });

  it('keeps a library 4xx a 4xx, passing on only a message meant for the client', () => {
    expect(answer(Object.assign(new Error('secret internals'), { status: 416 }))).toMatchObject({ status: 416, body: { code: 'invalid_request', detail: 'The request is malformed.' } });
    expect(answer(Object.assign(new Error('range not satisfiable'), { status: 416, expose: true }))).toMatchObject({ status: 416, body: { detail: 'range not satisfiable' } });
  });

  it('answers anything else with a 500 that says nothing of it', () => {
    expect(answer(new Error('connection string leaked'))).toEqual({ status: 500, body: { type: 'server_error', code: 'error', detail: 'A server error occurred.', attr: null } });
    expect(answer(Object.assign(new Error('boom'), { status: 503 }))).toMatchObject({ status: 500 });
    expect(answer(null)).toMatchObject({ status: 500 });
    expect(answer(badRequest('x is wrong.', 'x'))).toMatchObject({ status: 400, body: { attr: 'x' } });
  });

  it('answers a store that is away with a 503 to retry, not a 500: the management API did during every outage', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const unavailable = { status: 503, body: { type: 'server_error', code: 'service_unavailable', detail: expect.stringContaining('retry'), attr: null } };
    expect(answer(refused)).toEqual(unavailable);
    // Postgres shutting down, and pg-pool giving up on a connection.
    expect(answer(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toEqual(unavailable);
    expect(answer(new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') }))).toEqual(unavailable);
    // The ClickHouse adapter's error, whose cause is the refused connection.
    expect(answer(new Error('connect ECONNREFUSED 127.0.0.1:8123', { cause: refused }))).toEqual(unavailable);
    // ioredis when Redis does not answer.
    expect(answer(Object.assign(new Error('Reached the max retries per request limit (which is 2).'), { name: 'MaxRetriesPerRequestError' }))).toEqual(unavailable);
    // A statement the store refused is the server's fault, not an outage.
    expect(answer(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).toMatchObject({ status: 500 });
  });
});
