import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, RequestHandler } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '@tributary/logger';
import { routePattern } from './route-table.js';
import { shareMetricsWithPrimary } from './workers.js';

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
  shareMetricsWithPrimary(registry);
  return registry;
}

/** Paths the runtime itself answers for probes and scrapers; they are logged at debug only, as they come every few seconds. */
export const RUNTIME_PATHS = ['/_health', '/_ready', '/metrics'] as const;

const REQUEST_ID = /^[\w.:@-]{1,128}$/;

/** Starts observing one request; `route` names its route pattern once it is answered. */
export type ObserveRequest = (req: IncomingMessage, res: ServerResponse, route: (method: string, path: string) => string) => void;

/**
 * Counts and times every request by route pattern (not path, which would give a series per id)
 * and status, and logs one line per request with the request id, which it also echoes as
 * `X-Request-Id`: the caller's own when it sent a sane one (a proxy's, say), else a new one.
 * One per registry: Express's routes and the runtime's direct routes share it.
 */
export function requestObserver(registry: Registry, logger: Logger): ObserveRequest {
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
  // Children bound to each label set once (routes, methods and statuses are few): hashing the
  // labels on every count and observation costs more than the counting.
  const series = new Map<string, { count: () => void; time: (seconds: number) => void }>();
  const seriesOf = (labels: { method: string; route: string; status: string }) => {
    const key = `${labels.method} ${labels.route} ${labels.status}`;
    let found = series.get(key);
    if (!found) {
      const counter = requests.labels(labels);
      const histogram = duration.labels(labels);
      found = { count: () => counter.inc(), time: (seconds) => histogram.observe(seconds) };
      series.set(key, found);
    }
    return found;
  };
  return (req, res, route) => {
    const started = process.hrtime.bigint();
    const offered = req.headers['x-request-id'];
    const id = typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : randomUUID();
    // Taken now: Express rewrites `req.url` inside mounted routers.
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    res.setHeader('X-Request-Id', id);
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const labels = { method, route: route(method, path), status: String(res.statusCode) };
      const { count, time } = seriesOf(labels);
      count();
      time(seconds);
      const line = { req_id: id, method, route: labels.route, path, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 };
      if (probes.has(path)) logger.debug(line, 'request');
      else logger.info(line, 'request');
    });
  };
}

/** The observer as Express middleware, labelling each request with the pattern of the Express route that answered it. */
export function requestObservability(app: Express, observe: ObserveRequest): RequestHandler {
  const route = (method: string, path: string) => routePattern(app, method, path) ?? 'unmatched';
  return (req, res, next) => {
    observe(req, res, route);
    next();
  };
}
