import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '@tributary/logger';
import { requestTarget } from './request-target.js';
import { TalliedCounter } from './tallied-counter.js';
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

/**
 * The status a request is counted and logged with when its client closed the connection before
 * the whole response was sent: nginx's 499, which operators know from its access logs.
 */
export const CLIENT_CLOSED_REQUEST = 499;

interface Series {
  counter: { inc: () => void };
  histogram: { observe: (seconds: number) => void };
}

/**
 * Starts observing one request; `route` names its route pattern once it is answered.
 * `directRoute`: the request went to a direct route (one of the SDKs' hot paths, see
 * DirectRoute), whose successful answers are logged at debug (see requestObserver).
 */
export type ObserveRequest = (req: IncomingMessage, res: ServerResponse, route: (method: string, path: string) => string, directRoute?: boolean) => void;

/**
 * Counts and times every request by route pattern (not path, which would give a series per id)
 * and status, and logs one line per request with the request id, which it also echoes as
 * `X-Request-Id`: the caller's own when it sent a sane one (a proxy's, say), else a new one.
 * One per registry: Express's routes and the runtime's direct routes share it.
 *
 * Lines go out at info, except for probes and for successful answers on the direct routes (the
 * SDKs' hot paths: capture's event endpoints, `/decide`, `/flags`), which go at debug. SDKs send
 * an event batch or ask for flags on every page view: a line each would cost a noticeable share
 * of decide's CPU per request, to repeat what the metrics above already count by route and
 * status. Their errors (4xx, 5xx) are still logged at info, as is every request
 * Express answers. A request whose client left before its response was sent is counted and
 * logged with status 499 (CLIENT_CLOSED_REQUEST). Rust HTTP services built on tower-http log
 * responses at debug by default.
 */
export function requestObserver(registry: Registry, logger: Logger): ObserveRequest {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new TalliedCounter({ name: 'tributary_http_requests_total', help: 'HTTP requests answered, by route pattern and status.', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'tributary_http_request_duration_seconds',
    help: 'Time from a request arriving to its response being sent, by route pattern and status.',
    labelNames,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const probes = new Set<string>(RUNTIME_PATHS);
  // Children bound to each label set once (routes, methods and statuses are few), found by route,
  // method and status in turn: hashing the labels, or joining them into one key, on every request
  // costs more than the counting.
  const series = new Map<string, Map<string, Map<number, Series>>>();
  const seriesOf = (route: string, method: string, status: number): Series => {
    let byMethod = series.get(route);
    if (!byMethod) series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (!found) {
      const labels = { method, route, status: String(status) };
      found = { counter: requests.tally(labels), histogram: duration.labels(labels) };
      byStatus.set(status, found);
    }
    return found;
  };
  return (req, res, route, directRoute = false) => {
    const started = process.hrtime.bigint();
    const offered = req.headers['x-request-id'];
    const id = typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : randomUUID();
    // Taken now: Express rewrites `req.url` inside mounted routers. A target no route can take
    // (the parser refused it) is logged as it came and counted as unmatched.
    const target = requestTarget(req);
    const path = target?.path ?? req.url ?? '/';
    const method = req.method ?? 'GET';
    res.setHeader('X-Request-Id', id);
    // 'close' rather than 'finish', which a response whose client went away first never emits:
    // such a request would go uncounted and unlogged. `on`, not `once`: it is emitted once, and
    // `once` wraps every listener.
    res.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = res.writableFinished ? res.statusCode : CLIENT_CLOSED_REQUEST;
      const pattern = target ? route(method, path) : UNMATCHED;
      const { counter, histogram } = seriesOf(pattern, method, status);
      counter.inc();
      histogram.observe(seconds);
      const level = probes.has(path) || (directRoute && status < 400) ? 'debug' : 'info';
      if (logger.isLevelEnabled(level)) logger[level]({ req_id: id, method, route: pattern, path, status, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    });
  };
}

/** The route of a request that none takes, as metrics and logs label it. */
export const UNMATCHED = 'unmatched';
export const unmatchedRoute = () => UNMATCHED;
