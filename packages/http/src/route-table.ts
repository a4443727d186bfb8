import type { Express, RequestHandler } from 'express';

/**
 * What this package reads of Express's router (router 2): a layer matches a path and holds a
 * route or a nested router. The 405 handler, the request metrics and the OpenAPI document all
 * read the routes from here, so what they report is what Express actually dispatches.
 */
export interface Layer {
  match(path: string): false | { path: string; pattern?: string | RegExp };
  rawPath?: string | RegExp | (string | RegExp)[];
  route?: { methods: Record<string, boolean | undefined>; stack: { handle: RequestHandler }[] };
  handle: { stack?: Layer[] };
}

export const stackOf = (app: Express): Layer[] => (app.router as unknown as { stack: Layer[] }).stack;

/**
 * A path these readers can match without the router decoding its parameters: the router throws
 * on a parameter that is not valid percent-encoded UTF-8 (`/persons/%C0%80`), and the readers run
 * outside its error handling (the metrics label is read once the response is sent). Which route
 * matches never depends on a parameter's decoded value, so escaping `%` changes no answer.
 */
export const undecodedPath = (path: string) => path.replaceAll('%', '%25');

const takes = (route: NonNullable<Layer['route']>, method: string) =>
  Boolean(route.methods._all || route.methods[method.toLowerCase()] || (method === 'HEAD' && route.methods.get));

/**
 * The pattern of the route that answers `method path`, mount paths included
 * (`/api/environments/:project_id/persons/:id`), or undefined when none does. Labels for request
 * metrics and logs: bounded by the routes, unlike the paths themselves.
 */
export function routePattern(app: Express, method: string, path: string): string | undefined {
  const find = (stack: readonly Layer[], rest: string, prefix: string): string | undefined => {
    for (const layer of stack) {
      const match = layer.match(rest);
      if (!match) continue;
      const pattern = typeof match.pattern === 'string' ? match.pattern : '';
      if (layer.route) {
        if (takes(layer.route, method)) return join(prefix, pattern) || '/';
      } else if (layer.handle.stack) {
        const found = find(layer.handle.stack, rest.slice(match.path.length) || '/', join(prefix, pattern));
        if (found) return found;
      }
    }
    return undefined;
  };
  return find(stackOf(app), undecodedPath(path), '');
}

export interface MountedRoute {
  method: string;
  /** Express's pattern, mount paths included. */
  path: string;
  /** Every handler on the route, in order, for the metadata some of them carry. */
  handlers: RequestHandler[];
}

const join = (prefix: string, path: string) => (path === '/' ? prefix : `${prefix}${path}`);

/** Every route mounted on `app`, one entry per method and path (paths given as arrays are split). */
export function mountedRoutes(app: Express): MountedRoute[] {
  const out: MountedRoute[] = [];
  const walk = (stack: readonly Layer[], prefix: string) => {
    for (const layer of stack) {
      const raw = layer.rawPath;
      const paths = (Array.isArray(raw) ? raw : [raw]).filter((p): p is string => typeof p === 'string');
      if (layer.route) {
        const handlers = layer.route.stack.map((s) => s.handle);
        const methods = Object.entries(layer.route.methods).filter(([, on]) => on).map(([m]) => m.toUpperCase());
        for (const path of paths) for (const method of methods) out.push({ method, path: join(prefix, path) || '/', handlers });
      } else if (layer.handle.stack) {
        for (const path of paths) walk(layer.handle.stack, join(prefix, path));
      }
    }
  };
  walk(stackOf(app), '');
  return out;
}
