import { Ajv } from 'ajv';
import express from 'express';
import { AJV_OPTIONS, mountedRoutes, operationDoc } from '@tributary/http';
import { mountApiRoutes, type ApiDeps } from './api-routes.js';
import { QUERY_SCHEMAS } from './query/query-schemas.js';

/**
 * Every schema a request is held to: each documented route's query string and body, and each query
 * kind's. The routes are built only to be read (they touch their stores when a request comes;
 * only the status routes read a setting when built).
 */
function requestSchemas(): [string, object][] {
  const app = express();
  mountApiRoutes(app, { status: {} } as unknown as ApiDeps);
  const documented = mountedRoutes(app).flatMap((route) => {
    const { query, body } = operationDoc(route);
    const where = `${route.method} ${route.path}`;
    return [...(query ? [[`${where} query`, query] as [string, object]] : []), ...(body ? [[`${where} body`, body] as [string, object]] : [])];
  });
  const all = [...documented, ...Object.entries(QUERY_SCHEMAS).map(([kind, schema]): [string, object] => [`query kind ${kind}`, schema])];
  // Both base paths mount the same routes: each schema once, under the first route that uses it.
  return all.filter(([, schema], i) => all.findIndex(([, other]) => other === schema) === i);
}

describe('the schemas requests are validated with', () => {
  const schemas = requestSchemas();

  it('include every documented query string, body and query kind', () => {
    expect(schemas.length).toBeGreaterThan(30);
    expect(schemas.map(([where]) => where)).toEqual(expect.arrayContaining(['GET /api/environments/:project_id/insights query', 'query kind TrendsQuery']));
  });

  // ajv only logs what strict mode finds (a `properties` without `type: 'object'`, say), once per process: a warning here would scroll past in the service's log.
  it.each(schemas)('%s compiles with the service’s options and no strict-mode warning', (_where, schema) => {
    const warnings: unknown[][] = [];
    const ajv = new Ajv({ ...AJV_OPTIONS, logger: { log: () => undefined, warn: (...args: unknown[]) => warnings.push(args), error: (...args: unknown[]) => warnings.push(args) } });
    ajv.compile(schema);
    expect(warnings).toEqual([]);
  });
});
