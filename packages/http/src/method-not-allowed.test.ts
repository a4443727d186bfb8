import express, { Router, type Request, type Response } from 'express';
import { HttpError } from './errors.js';
import { methodNotAllowedHandler } from './method-not-allowed.js';

function appWithRoutes() {
  const app = express();
  const items = Router({ mergeParams: true });
  items.get('/', () => undefined);
  items.post('/', () => undefined);
  items.get('/:id', () => undefined);
  items.delete('/:id', () => undefined);
  app.use('/api/projects/:project_id/items', items);
  app.post(['/capture', '/batch'], () => undefined);
  return app;
}

/** What the handler does with one request: passes it on, answers it, or fails it with an error. */
function outcome(method: string, path: string): { next?: unknown; status?: number; allow?: string } {
  const handler = methodNotAllowedHandler(appWithRoutes());
  const result: { next?: unknown; status?: number; allow?: string } = {};
  const res = {
    status(code: number) {
      result.status = code;
      return this;
    },
    set(_name: string, value: string) {
      result.allow = value;
      return this;
    },
    end() {},
  } as unknown as Response;
  handler({ method, path } as Request, res, (error?: unknown) => {
    result.next = error ?? 'next';
  });
  return result;
}

describe('405 with Allow', () => {
  it('names the methods the routes at a path take, looking into mounted routers', () => {
    const { next } = outcome('PUT', '/api/projects/1/items/7');
    expect(next).toBeInstanceOf(HttpError);
    expect(next).toMatchObject({ status: 405, code: 'method_not_allowed', headers: { Allow: 'GET, HEAD, DELETE' } });
    expect(outcome('DELETE', '/capture').next).toMatchObject({ status: 405, headers: { Allow: 'POST' } });
  });

  it('reads a path whose parameter is not valid percent-encoding without throwing', () => {
    expect(outcome('PUT', '/api/projects/%C0%80/items/%zz').next).toMatchObject({ status: 405, headers: { Allow: 'GET, HEAD, DELETE' } });
  });

  it('passes on a path no route takes, so it stays a 404', () => {
    expect(outcome('PUT', '/nowhere').next).toBe('next');
    expect(outcome('GET', '/api/projects/1/other').next).toBe('next');
  });

  it('answers OPTIONS with the Allow header alone', () => {
    expect(outcome('OPTIONS', '/api/projects/1/items/')).toEqual({ status: 204, allow: 'GET, HEAD, POST, OPTIONS' });
  });
});
