import express, { Router } from 'express';
import { mountedRoutes, routePattern } from './route-table.js';

function app() {
  const a = express();
  const items = Router({ mergeParams: true });
  items.get('/', () => undefined);
  items.post('/', () => undefined);
  items.get('/:id', () => undefined);
  items.delete('/:id/tags', () => undefined);
  a.use('/api', () => undefined);
  a.use('/api/projects/:project_id/items', items);
  a.post(['/capture', '/batch'], () => undefined);
  a.use(Router().get('/decide', () => undefined));
  return a;
}

describe('the route table read from Express', () => {
  it('names the pattern that answers a request, mount paths included, so labels stay bounded', () => {
    const a = app();
    expect(routePattern(a, 'GET', '/api/projects/7/items/42')).toBe('/api/projects/:project_id/items/:id');
    expect(routePattern(a, 'GET', '/api/projects/7/items/')).toBe('/api/projects/:project_id/items');
    expect(routePattern(a, 'HEAD', '/api/projects/7/items/42')).toBe('/api/projects/:project_id/items/:id');
    expect(routePattern(a, 'POST', '/batch/')).toBe('/batch');
    expect(routePattern(a, 'GET', '/decide')).toBe('/decide');
  });

  it('names the pattern of a path whose parameter is not valid percent-encoding, instead of throwing after the response', () => {
    const a = app();
    expect(routePattern(a, 'GET', '/api/projects/%C0%80/items/%FF%FE')).toBe('/api/projects/:project_id/items/:id');
    expect(routePattern(a, 'GET', '/api/projects/7/items/%')).toBe('/api/projects/:project_id/items/:id');
  });

  it('names no pattern for a method or path no route takes', () => {
    const a = app();
    expect(routePattern(a, 'PUT', '/api/projects/7/items/42')).toBeUndefined();
    expect(routePattern(a, 'GET', '/nowhere')).toBeUndefined();
  });

  it('lists every route once per method and path, looking into mounted routers', () => {
    const listed = mountedRoutes(app()).map((r) => `${r.method} ${r.path}`);
    expect(listed).toEqual([
      'GET /api/projects/:project_id/items',
      'POST /api/projects/:project_id/items',
      'GET /api/projects/:project_id/items/:id',
      'DELETE /api/projects/:project_id/items/:id/tags',
      'POST /capture',
      'POST /batch',
      'GET /decide',
    ]);
  });
});
