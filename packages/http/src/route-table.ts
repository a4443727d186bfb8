import type { Express, RequestHandler } from 'express';
import FindMyWay from 'find-my-way';

/**
 * What this package reads of Express's router (router 2): a layer holds a route or a nested
 * router. The route table and the OpenAPI document read the routes from here, so what they list
 * is what Express dispatches.
 */
interface Layer {
  rawPath?: string | RegExp | (string | RegExp)[];
  route?: { methods: Record<string, boolean | undefined>; stack: { handle: RequestHandler }[] };
  handle: { stack?: Layer[] };
}

const stackOf = (app: Express): Layer[] => (app.router as unknown as { stack: Layer[] }).stack;

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
      // A route or router the table cannot list would answer 404 to every request.
      if ((layer.route || layer.handle.stack) && paths.length !== [raw].flat().length) throw new Error(`Routes are declared with string paths: ${String(raw)} is not one.`);
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

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Methods in the order `Allow` lists them. */
const inAllowOrder = (methods: Iterable<string>): string[] => [...methods].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));

/** What the table holds for one method of one route. */
export interface FoundRoute<T> {
  /** The route as declared, mount paths included (`/api/environments/:project_id/persons/:id`). */
  pattern: string;
  /** The pattern for the request metrics and logs (bounded by the routes, unlike paths), made once per route rather than per request. */
  label: () => string;
  target: T;
}

/**
 * Every route of a service, whatever serves it, in one find-my-way router: which route takes a
 * request, and which methods a path takes for a 405's `Allow`, come from here alone. Paths match
 * as Express's router matches them by default: letter case ignored, one trailing slash allowed,
 * parameters never empty, and the path read as sent (percent-encoding is the route's to decode).
 */
export class RouteTable<T> {
  private readonly router = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: Infinity });
  private readonly methods = new Set<string>();

  /**
   * Declares `method pattern` (`:name` parameters; `_ALL` for every method, as Express's `all`).
   * The first route declared for a method and pattern keeps it, as in Express. GET takes HEAD.
   */
  add(method: string, pattern: string, target: T): void {
    if (/[*{}()]/.test(pattern)) throw new Error(`Route ${pattern}: the route table takes plain paths with :name parameters only.`);
    const found: FoundRoute<T> = { pattern, label: () => pattern, target };
    if (method === '_ALL') {
      this.router.all(pattern, noop, found);
      return;
    }
    for (const taken of method === 'GET' ? ['GET', 'HEAD'] : [method]) {
      if (this.router.hasRoute(taken as FindMyWay.HTTPMethod, pattern)) continue;
      this.router.on(taken as FindMyWay.HTTPMethod, pattern, noop, found);
      this.methods.add(taken);
    }
  }

  /** The route that takes `method` at `path` (as `requestTarget` reads it), or null. */
  find(method: string, path: string): FoundRoute<T> | null {
    // Not a path (`*`, as in `OPTIONS *`): find-my-way would read it as `/`.
    if (path.charCodeAt(0) !== 47) return null;
    // Escaped so that find-my-way matches the path as sent: decoded, `/persons/%C0%80` would be
    // a bad URL it takes no route for, and `/fl%61gs` would be `/flags`.
    const match = this.router.find(method as FindMyWay.HTTPMethod, path.includes('%') ? path.replaceAll('%', '%25') : path);
    if (match === null || (path.includes('//') && Object.values(match.params).includes(''))) return null;
    return match.store as FoundRoute<T>;
  }

  /** The methods routes take at `path`, in `Allow` order: none where no route is. */
  allowed(path: string): string[] {
    return inAllowOrder([...this.methods].filter((method) => this.find(method, path) !== null));
  }
}

const noop = () => undefined;
