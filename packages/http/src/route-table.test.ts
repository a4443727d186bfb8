import express, { Router } from 'express';
import { RouteTable, mountedRoutes } from './route-table.js';

function app() {
  const a = express();
  const items = Router({ mergeParams: true });
  items.get('/', () => undefined);
  items.post('/', () => undefined);
  items.get('/:id', () => undefined);
  items.delete('/:id', () => undefined);
  items.delete('/:id/tags', () => undefined);
  a.use('/api', () => undefined);
  a.use('/api/projects/:project_id/items', items);
  a.post(['/capture', '/batch'], () => undefined);
  a.use(Router().get('/decide', () => undefined));
  return a;
}

function table() {
  const routes = new RouteTable<string>();
  for (const { method, path } of mountedRoutes(app())) routes.add(method, path, 'express');
  return routes;
}

describe('the routes read from Express', () => {
  it('lists every route once per method and path, looking into mounted routers', () => {
    const listed = mountedRoutes(app()).map((r) => `${r.method} ${r.path}`);
    expect(listed).toEqual([
      'GET /api/projects/:project_id/items',
      'POST /api/projects/:project_id/items',
      'GET /api/projects/:project_id/items/:id',
      'DELETE /api/projects/:project_id/items/:id',
      'DELETE /api/projects/:project_id/items/:id/tags',
      'POST /capture',
      'POST /batch',
      'GET /decide',
    ]);
  });

  it('refuses a route declared by a regular expression, which the table could not take', () => {
    const a = express();
    a.get(/^\/old/, () => undefined);
    expect(() => mountedRoutes(a)).toThrow(/string paths/);
  });
});

describe('the route table', () => {
  it('names the pattern that takes a request, mount paths included, so labels stay bounded', () => {
    const routes = table();
    expect(routes.find('GET', '/api/projects/7/items/42')?.pattern).toBe('/api/projects/:project_id/items/:id');
    expect(routes.find('GET', '/api/projects/7/items/')?.pattern).toBe('/api/projects/:project_id/items');
    expect(routes.find('POST', '/batch/')?.label()).toBe('/batch');
    expect(routes.find('GET', '/decide')?.pattern).toBe('/decide');
  });

  it('matches as Express does by default: letter case ignored, one trailing slash allowed, GET taking HEAD', () => {
    const routes = table();
    expect(routes.find('GET', '/API/Projects/7/ITEMS/42/')?.pattern).toBe('/api/projects/:project_id/items/:id');
    expect(routes.find('HEAD', '/api/projects/7/items/42')?.pattern).toBe('/api/projects/:project_id/items/:id');
    expect(routes.find('POST', '/batch//')).toBeNull();
    expect(routes.find('POST', '//batch')).toBeNull();
  });

  it('never takes an empty parameter, as Express never does', () => {
    const routes = table();
    expect(routes.find('GET', '/api/projects//items/42')).toBeNull();
    expect(routes.find('DELETE', '/api/projects/7/items//')).toBeNull();
    expect(routes.find('DELETE', '/api/projects/7/items//tags')).toBeNull();
  });

  it('matches the path as sent: an invalid percent-encoding is for the route to refuse, and an encoded letter is not that letter', () => {
    const routes = table();
    expect(routes.find('GET', '/api/projects/%C0%80/items/%FF%FE')?.pattern).toBe('/api/projects/:project_id/items/:id');
    expect(routes.find('GET', '/api/projects/7/items/%')?.pattern).toBe('/api/projects/:project_id/items/:id');
    expect(routes.find('GET', '/api/projects/7/items/a%2Fb')?.pattern).toBe('/api/projects/:project_id/items/:id');
    expect(routes.find('GET', '/d%65cide')).toBeNull();
  });

  it('takes no request for a method or path no route takes, nor a target that is not a path', () => {
    const routes = table();
    expect(routes.find('PUT', '/api/projects/7/items/42')).toBeNull();
    expect(routes.find('GET', '/nowhere')).toBeNull();
    expect(routes.find('GET', '/api')).toBeNull();
    expect(routes.find('OPTIONS', '*')).toBeNull();
  });

  it('names the methods the routes at a path take, in Allow order, for a 405', () => {
    const routes = table();
    expect(routes.allowed('/api/projects/1/items/7')).toEqual(['GET', 'HEAD', 'DELETE']);
    expect(routes.allowed('/api/projects/1/items/')).toEqual(['GET', 'HEAD', 'POST']);
    expect(routes.allowed('/capture')).toEqual(['POST']);
    expect(routes.allowed('/api/projects/%C0%80/items/%zz')).toEqual(['GET', 'HEAD', 'DELETE']);
    expect(routes.allowed('/nowhere')).toEqual([]);
    expect(routes.allowed('/api/projects/1/other')).toEqual([]);
  });

  it('keeps a method and pattern for the route declared first, whatever its parameters are named', () => {
    const routes = new RouteTable<string>();
    routes.add('GET', '/flags', 'direct');
    routes.add('GET', '/flags', 'express');
    routes.add('POST', '/flags', 'express');
    routes.add('GET', '/persons/:id', 'first');
    routes.add('GET', '/persons/:person_id', 'second');
    expect(routes.find('GET', '/flags')?.target).toBe('direct');
    expect(routes.find('POST', '/flags')?.target).toBe('express');
    expect(routes.find('GET', '/persons/1')).toMatchObject({ pattern: '/persons/:id', target: 'first' });
  });

  it('takes every method for a route declared for all of them', () => {
    const routes = new RouteTable<string>();
    routes.add('_ALL', '/anything', 'express');
    expect(routes.find('PATCH', '/anything')?.target).toBe('express');
    expect(routes.find('OPTIONS', '/anything')?.target).toBe('express');
  });

  it('refuses at start-up a pattern it would read otherwise than Express: wildcards and optional parts', () => {
    const routes = new RouteTable<string>();
    expect(() => routes.add('GET', '/files/*path', 'express')).toThrow(/:name parameters only/);
    expect(() => routes.add('GET', '/users{/:id}', 'express')).toThrow(/:name parameters only/);
  });
});
