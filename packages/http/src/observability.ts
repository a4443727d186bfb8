import { randomUUID } from 'node:crypto';
import type { Express, RequestHandler } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '@tributary/logger';
import { routePattern } from './route-table.js';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * One registry per service, labelled with its name, holding Node's process figures (RSS, heap,
 * event-loop lag, GC) under prom-client's standard names, so stock dashboards read them as they
 * are. A registry rather than prom-client's global one: tests run several services in one process.
 */
export function createMetrics(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Paths the runtime itself answers for probes and scrapers; they are logged at debug only, as they come every few seconds. */
export const RUNTIME_PATHS = ['/_health', '/_ready', '/metrics'] as const;

const REQUEST_ID = /^[\w.:@-]{1,128}$/;

/**
 * Counts and times every request by route pattern (not path, which would give a series per id)
 * and status, and logs one line per request with the request id, which it also echoes as
 * `X-Request-Id`: the caller's own when it sent a sane one (a proxy's, say), else a new one.
 */
export function requestObservability(app: Express, registry: Registry, logger: Logger): RequestHandler {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'tributary_http_requests_total', help: 'HTTP requests answered, by route pattern and status.', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'tributary_http_request_duration_seconds',
    help: 'Time from a request arriving to its response being sent, by route pattern and status.',
    labelNames,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const probes = new Set<string>(RUNTIME_PATHS);
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const offered = req.get('x-request-id');
    const id = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
    res.setHeader('X-Request-Id', id);
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Inside a mounted router `req.path` is relative to the mount, and stays so once answered.
      const path = req.originalUrl.split('?', 1)[0]!;
      const route = routePattern(app, req.method, path) ?? 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, seconds);
      const line = { req_id: id, method: req.method, route, path, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 };
      if (probes.has(path)) logger.debug(line, 'request');
      else logger.info(line, 'request');
    });
    next();
  };
}
