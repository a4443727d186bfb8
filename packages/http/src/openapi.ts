import type { RequestHandler } from 'express';
import { RUNTIME_PATHS } from './observability.js';
import { validate } from './request-validation.js';
import type { MountedRoute } from './route-table.js';

/** What a route says about itself for the OpenAPI document; the schemas are the ones it validates with. */
export interface OperationDoc {
  summary: string;
  description?: string;
  tags?: string[];
  /** JSON schema of the query string: an object whose properties are the parameters (ajv's strict mode wants it to say so). */
  query?: { type: 'object'; properties?: Record<string, object>; required?: readonly string[] };
  /** JSON schema of a JSON request body. */
  body?: object;
  /** Content types the body may come as, when it is not only JSON. */
  bodyTypes?: string[];
  /** Status -> description, and the response body's schema when it has one. */
  responses?: Record<string, { description: string; schema?: object; contentType?: string }>;
  /** Scopes a personal API key needs; set by `requireScopes`, so a route need not repeat them. */
  scopes?: string[];
  /** Who may call the route beyond its scopes (an instance operator, the key itself); set by the check that enforces it. */
  access?: string;
  /** The route takes the project API key in its body (capture, decide) rather than a personal one. */
  projectKey?: boolean;
}

const DOC = Symbol.for('tributary.operation-doc');
type Documented = { [DOC]?: Partial<OperationDoc> };

/** What the handlers of a route say about it, together. */
export function operationDoc(route: MountedRoute): Partial<OperationDoc> {
  return Object.assign({}, ...route.handlers.map((h) => (h as Documented)[DOC] ?? {}));
}

/** Attaches documentation to a handler that does something else too (such as a scope check). */
export function withDoc<H extends RequestHandler>(handler: H, doc: Partial<OperationDoc>): H {
  (handler as Documented)[DOC] = { ...(handler as Documented)[DOC], ...doc };
  return handler;
}

/**
 * Documents a route and holds the request to what it documents: the query string and a parsed
 * JSON body are checked against the declared schemas before the handler runs, so the document
 * cannot promise what the route does not enforce. Put it after the auth checks, so a request
 * without credentials learns that first.
 */
export function documented(doc: OperationDoc): RequestHandler {
  return withDoc((req, _res, next) => {
    try {
      if (doc.query) validateQueryShape(doc.query, req.query);
      if (doc.body && req.body !== undefined && req.is('application/json')) validate(doc.body, structuredClone(req.body));
      next();
    } catch (error) {
      next(error);
    }
  }, doc);
}

function validateQueryShape(schema: NonNullable<OperationDoc['query']>, query: Record<string, unknown>): void {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    const raw = Array.isArray(value) ? value[0] : value;
    const types = [(schema.properties?.[key] as { type?: string | string[] } | undefined)?.type].flat();
    if (typeof raw !== 'string') values[key] = raw;
    else if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(raw)) values[key] = Number(raw);
    else if (types.includes('boolean') && (raw === 'true' || raw === 'false')) values[key] = raw === 'true';
    else values[key] = raw;
  }
  validate(schema, values);
}

/** Express's `/persons/:id` as OpenAPI's `/persons/{id}/`: the trailing slash PostHog's clients send, except on file names. */
export function openApiPath(expressPath: string): string {
  const path = expressPath.replace(/:(\w+)/g, '{$1}');
  const last = path.split('/').at(-1) ?? '';
  return path.endsWith('/') || last.includes('.') ? path : `${path}/`;
}

const ERROR_RESPONSE = { $ref: '#/components/responses/Error' };

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
}

/**
 * One OpenAPI 3.1 document from the routes Express has mounted (see `mountedRoutes`) and the
 * documentation their handlers carry. The runtime's own probe and metrics paths are left out:
 * they are per service, not behind the front door.
 */
export function openApiDocument(routes: readonly MountedRoute[], info: DocumentInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const skipped = new Set<string>(RUNTIME_PATHS);
  for (const route of routes) {
    if (skipped.has(route.path) || route.method === 'OPTIONS' || route.method === 'HEAD' || route.method === '_ALL') continue;
    const doc = operationDoc(route);
    const path = openApiPath(route.path);
    const pathParameters = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const queryParameters = Object.entries(doc.query?.properties ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: doc.query?.required?.includes(name) ?? false,
      schema,
    }));
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(doc.responses ?? { 200: { description: 'Success.' } })) {
      responses[status] = {
        description: response.description,
        ...(response.schema ? { content: { [response.contentType ?? 'application/json']: { schema: response.schema } } } : {}),
      };
    }
    responses['4XX'] = ERROR_RESPONSE;
    const security = doc.scopes ? [{ personalApiKey: doc.scopes }] : [];
    paths[path] ??= {};
    paths[path]![route.method.toLowerCase()] = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: doc.summary ?? `${route.method} ${path}`,
      ...(doc.description || doc.projectKey ? { description: [doc.description, doc.projectKey ? 'Authenticated by the project API key in the body field `api_key` (or `token`).' : ''].filter(Boolean).join('\n\n') } : {}),
      tags: doc.tags ?? [tagOf(route.path)],
      ...(pathParameters.length + queryParameters.length > 0 ? { parameters: [...pathParameters, ...queryParameters] } : {}),
      ...(doc.body
        ? { requestBody: { required: true, content: Object.fromEntries((doc.bodyTypes ?? ['application/json']).map((type) => [type, { schema: doc.body }])) } }
        : {}),
      responses,
      security,
      ...(doc.access ? { 'x-access': doc.access } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: {
        personalApiKey: { type: 'http', scheme: 'bearer', description: 'A personal API key (phx_...); its scopes are listed per operation.' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['type', 'code', 'detail', 'attr'],
          properties: {
            type: { type: 'string', enum: ['invalid_request', 'authentication_error', 'permission_denied', 'throttled', 'server_error'] },
            code: { type: 'string' },
            detail: { type: 'string' },
            attr: { type: ['string', 'null'] },
          },
        },
      },
      responses: { Error: { description: 'The one error shape: what went wrong, and the field when one is to blame.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
}

/** `/api/environments/:project_id/persons/:id` -> `persons`: the resource, for grouping. */
function tagOf(path: string): string {
  const segments = path.split('/').filter((s) => s && !s.startsWith(':'));
  if (segments[0] !== 'api') return segments[0] ?? 'root';
  const scoped = (segments[1] === 'environments' || segments[1] === 'projects') && segments[2];
  return (scoped ? segments[2] : segments[1]) ?? 'api';
}
