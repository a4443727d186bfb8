import { Validator } from '@seriousme/openapi-schema-validator';
import { RUNTIME_PATHS, mountedRoutes, openApiPath, startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { createTestTenant, testConfig, type TestTenant } from '@tributary/test-support';
import { buildApi, type ApiStores } from '../src/api-app.js';
import { publicRoutes } from '../src/operations/schema-routes.js';

type Operation = { parameters?: { name: string; in: string; required?: boolean }[]; security?: Record<string, string[]>[]; requestBody?: { content: Record<string, { schema: any }> } };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

let runtime: ServiceRuntime;
let stores: ApiStores;
let url: string;
let tenant: TestTenant;
let document: Document;

beforeAll(async () => {
  const config = testConfig({ apiPort: 0, host: '127.0.0.1' });
  const service = await buildApi({ config, logger: createLogger('api-test', config.logLevel) });
  stores = service.stores;
  runtime = await startServiceRuntime({ ...service.options, shutdownTimeoutMs: 1000 }, false);
  url = `http://127.0.0.1:${runtime.port}`;
  tenant = await createTestTenant(stores.pool, config);
  const response = await fetch(`${url}/api/schema/`);
  expect(response.status).toBe(200);
  document = (await response.json()) as Document;
});

afterAll(() => runtime.shutdown('test finished'));

const ignored = new Set<string>(RUNTIME_PATHS);

describe('the OpenAPI document at /api/schema/', () => {
  it('is a valid OpenAPI 3.1 document, served without a key', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every route the api, capture and decide mount, with each method', () => {
    const routes = [...mountedRoutes(runtime.app), ...publicRoutes()].filter((r) => !ignored.has(r.path) && r.method !== 'OPTIONS');
    expect(routes.length).toBeGreaterThan(60);
    const missing = routes.filter((r) => !document.paths[openApiPath(r.path)]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    for (const path of ['/capture/', '/batch/', '/decide/', '/flags/', '/api/environments/{project_id}/persons/{id}/', '/status/', '/api/schema/']) expect(document.paths[path]).toBeDefined();
  });

  it('takes parameters, bodies and scopes from the schemas and checks the routes use', () => {
    const list = document.paths['/api/environments/{project_id}/events/']!.get!;
    expect(list.security).toEqual([{ personalApiKey: ['query:read'] }]);
    expect(list.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'project_id', in: 'path', required: true }), expect.objectContaining({ name: 'limit', in: 'query' })]));
    const decide = document.paths['/decide/']!.post!;
    expect(decide.security).toEqual([]);
    expect(decide.requestBody!.content['application/json']!.schema.required).toEqual(['distinct_id']);
    expect(document.paths['/api/environments/{project_id}/persons/{id}/']!.patch!.requestBody!.content['application/json']!.schema.required).toEqual(['properties']);
  });

  it('holds requests to the documented schema: a query it forbids is a 400 naming the field', async () => {
    const response = await fetch(`${url}/api/environments/${tenant.project.id}/persons/?limit=0`, { headers: { authorization: `Bearer ${tenant.personalApiKey}` } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: 'invalid_request', attr: 'limit' });
  });

  it('renders at /api/schema/docs/ with Swagger UI served from the npm package', async () => {
    const page = await fetch(`${url}/api/schema/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui-bundle.js');
    const bundle = await fetch(`${url}/api/schema/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    await bundle.body?.cancel();
  });
});
