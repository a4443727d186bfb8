import http from 'node:http';
import express, { type Express } from 'express';
import type { Logger } from '@tributary/logger';
import { answerClientErrors } from './client-error.js';
import { afterBody, carriesBody } from './after-body.js';
import { DEFAULT_TRUSTED_PROXIES, directServer, type DirectRoute } from './direct-routes.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { createMetrics, requestObserver, unmatchedRoute, type Registry } from './observability.js';
import { assessReadiness, type Dependencies } from './readiness.js';
import { requestTarget } from './request-target.js';
import { formatProblem } from './response-format.js';
import { RouteTable, mountedRoutes } from './route-table.js';
import { answerUnrouted } from './unrouted.js';
import { scrapeMetrics } from './workers.js';

export interface ServiceRuntimeOptions {
  name: string;
  logger: Logger;
  host: string;
  port: number;
  shutdownTimeoutMs: number;
  /** The service's metrics registry, for its own figures beside the HTTP and process ones; one is made when absent. */
  metrics?: Registry;
  /**
   * Mounts the service's own routes (string paths, `:name` parameters), all of them before the
   * runtime starts: the route table is read from them once. Health and readiness come before
   * them, the error handler after.
   */
  routes?: (app: Express) => void;
  /**
   * Proxies whose X-Forwarded-For is believed for the client's address (`req.ip`, a direct
   * route's `ip()`): addresses, CIDR ranges or Express's names (`loopback`), as its `trust proxy`
   * takes them. nginx's address on one machine when not given.
   */
  trustedProxies?: readonly string[];
  /** Routes served by plain node:http instead of Express (see `DirectRoute`); ahead of an Express route declared for the same method and path. */
  direct?: readonly DirectRoute[];
  /** The stores the service uses, for `/_ready`: required ones decide whether it takes traffic. */
  dependencies: Dependencies;
  /** Runs after the HTTP server stopped taking requests: flush producers, commit offsets, close pools. */
  stop: () => Promise<void>;
}

export interface ServiceRuntime {
  app: Express;
  server: http.Server;
  metrics: Registry;
  /** The port actually bound (useful with port 0 in tests). */
  port: number;
  shutdown: (reason: string) => Promise<void>;
}

/** What the route table holds for a route Express serves. */
const EXPRESS = Symbol('express');
const BODILESS_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const EXPRESS_FORMATS = ['json', 'csv'] as const;

/**
 * Starts an HTTP service with `/_health` (the process is alive), `/_ready` (its stores
 * answer, see readiness.ts) and `/metrics` (Prometheus text; nginx does not route it), logs and counts every
 * request, and drains it on SIGTERM/SIGINT: stop accepting, finish in-flight requests, run the
 * service's own `stop`, then exit.
 */
export async function startServiceRuntime(options: ServiceRuntimeOptions, handleSignals = true): Promise<ServiceRuntime> {
  const { logger } = options;
  const app = express();
  app.disable('x-powered-by');
  const trustedProxies = options.trustedProxies ?? DEFAULT_TRUSTED_PROXIES;
  // Trusting the front door makes req.ip the client's address.
  app.set('trust proxy', [...trustedProxies]);
  const metrics = options.metrics ?? createMetrics(options.name);
  const observe = requestObserver(metrics, logger);
  // No route reads the body of a GET, HEAD or OPTIONS: it is let through before the answer (see afterBody).
  app.use((req, _res, next) => (BODILESS_METHODS.has(req.method) && carriesBody(req) ? afterBody(req, () => next()) : next()));
  // CSV where a route writes it (`format=csv`); JSON everywhere.
  app.use((req, _res, next) => next(formatProblem(req.query.format, EXPRESS_FORMATS) ?? undefined));
  app.get('/_health', (_req, res) => {
    res.json({ status: 'ok', service: options.name });
  });
  app.get('/_ready', async (_req, res) => {
    const report = await assessReadiness(options.dependencies);
    res.status(report.status === 'not_ready' ? 503 : 200).json({ status: report.status, service: options.name, checks: report.checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.contentType).send(await scrapeMetrics(metrics));
  });
  options.routes?.(app);
  // Reached only where the route table and Express's router disagree about a path.
  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  // One table for every route, direct or Express's: which serves a request, and the 404 or 405
  // when none does, are decided here for both alike.
  const routes = new RouteTable<DirectRoute | typeof EXPRESS>();
  for (const route of options.direct ?? []) for (const path of route.paths) for (const method of route.methods) routes.add(method, path, route);
  for (const { method, path } of mountedRoutes(app)) routes.add(method, path, EXPRESS);
  const serveDirect = directServer(logger, trustedProxies);
  const server = http.createServer((req, res) => {
    // A target the parser refuses (see requestTarget) is a path no route takes.
    const target = requestTarget(req);
    const found = target && routes.find(req.method ?? 'GET', target.path);
    if (!target || !found) {
      observe(req, res, unmatchedRoute);
      answerUnrouted(req, res, target?.path ?? req.url ?? '', target ? routes.allowed(target.path) : [], logger);
    } else if (found.target === EXPRESS) {
      observe(req, res, found.label);
      app(req, res);
    } else {
      observe(req, res, found.label, true);
      serveDirect(found.target, req, res, target);
    }
  });
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  logger.info({ host: options.host, port }, `${options.name} listening`);

  let stopping: Promise<void> | null = null;
  const shutdown = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.info({ reason }, `${options.name} shutting down`);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), options.shutdownTimeoutMs);
      await closed;
      clearTimeout(timer);
      await options.stop();
      logger.info(`${options.name} stopped`);
    })();
    return stopping;
  };

  if (handleSignals) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        shutdown(signal).then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      });
    }
  }
  return { app, server, metrics, port, shutdown };
}
