import type { Express, RequestHandler } from 'express';
import { methodNotAllowed } from './errors.js';
import { stackOf, undecodedPath, type Layer } from './route-table.js';

/** Methods the routes at `path` answer, looking into mounted routers; '*' when one answers every method. */
function allowedMethods(stack: readonly Layer[], path: string, allowed: Set<string>): Set<string> {
  for (const layer of stack) {
    const match = layer.match(path);
    if (!match) continue;
    if (layer.route) {
      for (const [method, on] of Object.entries(layer.route.methods)) if (on) allowed.add(method === '_all' ? '*' : method.toUpperCase());
      if (layer.route.methods.get) allowed.add('HEAD');
    } else if (layer.handle.stack) {
      allowedMethods(layer.handle.stack, path.slice(match.path.length) || '/', allowed);
    }
  }
  return allowed;
}

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Methods in the order `Allow` lists them. */
export const inAllowOrder = (methods: Iterable<string>): string[] => [...methods].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));

/**
 * Runs after every route: a path some route answers, asked with another method, is a 405 with
 * `Allow` (an `OPTIONS` request is answered with just the header) instead of a 404. Mounted once
 * by the service runtime, so every service's routes get it without declaring anything.
 */
export function methodNotAllowedHandler(app: Express): RequestHandler {
  return (req, res, next) => {
    const allowed = allowedMethods(stackOf(app), undecodedPath(req.path), new Set());
    if (allowed.size === 0 || allowed.has('*') || allowed.has(req.method)) return next();
    const methods = inAllowOrder(allowed);
    if (req.method === 'OPTIONS') {
      res.status(204).set('Allow', [...methods, 'OPTIONS'].join(', ')).end();
      return;
    }
    next(methodNotAllowed(req.method, methods));
  };
}
