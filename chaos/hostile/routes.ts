/**
 * The routes to attack, read from the running system: `/api/schema/` is generated from the
 * routers capture, decide and the api actually mount (see `openApiDocument`), so a route added to
 * any of them is attacked without this file changing. Query parameters a handler reads without
 * declaring them are listed here by hand, as are the paths only nginx answers.
 */

export interface Operation {
  method: string;
  /** OpenAPI path, such as `/api/environments/{project_id}/persons/{id}/`. */
  template: string;
  params: string[];
  /** Query parameters and their schema types. */
  query: Record<string, string | undefined>;
  body?: Record<string, unknown>;
  /** Capture and decide: the project API key travels in the body. */
  projectKey: boolean;
  /** Personal API key scopes; undefined for public routes. */
  scopes?: string[];
}

export const routeKey = (op: Pick<Operation, 'method' | 'template'>) => `${op.method} ${op.template}`;

const ALIAS_PREFIX = '/api/projects/{project_id}/';
const CANONICAL_PREFIX = '/api/environments/{project_id}/';

/** The route an operation is an alias of: `/api/projects/{project_id}/…` mounts the same router as `/api/environments/{project_id}/…`. */
export function canonicalRoute(op: Pick<Operation, 'method' | 'template'>): string | null {
  return op.template.startsWith(ALIAS_PREFIX) ? `${op.method} ${CANONICAL_PREFIX}${op.template.slice(ALIAS_PREFIX.length)}` : null;
}

/** A case of the canonical operation sent to its alias's path instead. */
export function onAlias<T extends { route: string; path: string }>(c: T, alias: Pick<Operation, 'method' | 'template'>): T {
  return { ...c, route: routeKey(alias), path: c.path.replace(/^\/api\/environments\//, '/api/projects/') };
}

interface OpenApiOperation {
  parameters?: { name: string; in: string; schema?: { type?: string | string[] } }[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
  security?: { personalApiKey?: string[] }[];
  description?: string;
}

/** Parameters handlers read from the query string without declaring them in the document. */
const UNDECLARED_QUERY: [RegExp, string[]][] = [
  [/\/events\/values\/$/, ['key', 'value', 'event_name', 'format']],
  [/\/events\/\{id\}\/$/, ['format']],
  [/\/persons\/cohorts\/$/, ['person_id', 'format']],
  [/\/persons\/bulk_delete\/$/, ['ids', 'distinct_ids', 'delete_events', 'format']],
  [/\/persons\/\{id\}\/$/, ['delete_events', 'format']],
  [/\/update_property\/$/, ['key', 'value', 'format']],
  [/\/delete_property\/$/, ['$unset', 'format']],
  [/\/properties_timeline\/$/, ['format']],
  [/\/dashboards\/\{id\}\/$/, ['delete_insights']],
  [/^\/(capture|batch|e|i\/v0\/e|track|engage|s)\/$/, ['data', 'compression', 'ver', '_', 'sent_at', 'ip', 'token']],
  [/^\/(decide|flags)\/$/, ['v', 'data', 'compression', 'ip', '_', 'config', 'token']],
  [/(local_evaluation|definitions)\/$/, ['token', 'send_cohorts']],
  [/^\/api\/(surveys|early_access_features|web_experiments|product_tours)\/$/, ['token']],
];

/** Every operation of the OpenAPI document, with the parameters its handler reads. */
export function operationsOf(document: { paths: Record<string, Record<string, OpenApiOperation>> }): Operation[] {
  const out: Operation[] = [];
  for (const [template, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const query: Record<string, string | undefined> = {};
      for (const p of op.parameters ?? []) {
        if (p.in === 'query') query[p.name] = [p.schema?.type].flat()[0];
      }
      for (const [pattern, names] of UNDECLARED_QUERY) {
        if (pattern.test(template)) for (const name of names) query[name] ??= undefined;
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      const scopes = op.security?.[0]?.personalApiKey;
      out.push({
        method: method.toUpperCase(),
        template,
        params: [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        query,
        ...(body ? { body } : {}),
        projectKey: op.description?.includes('project API key') ?? false,
        ...(scopes ? { scopes } : {}),
      });
    }
  }
  return out;
}

/** Paths nginx answers itself, or that no service routes: they must answer in the same JSON shape. */
export const FRONT_DOOR_PATHS = ['/', '/_health', '/_ready', '/metrics', '/api', '/api/', '/nowhere', '/status', '/decide', '/flags/x/y', '/array/', '/api/feature_flag/'];

/** Methods no route takes, or that proxies treat specially. */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO'];
