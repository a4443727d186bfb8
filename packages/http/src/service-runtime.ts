import http from 'node:http';
import express, { type Express } from 'express';
import type { Logger } from '@tributary/logger';
import { answerClientErrors } from './client-error.js';
import { afterBody, carriesBody } from './after-body.js';
import { DEFAULT_TRUSTED_PROXIES, directDispatcher, type DirectRoute } from './direct-routes.js';
import { errorHandler, notFoundHandler, writeError } from './error-handler.js';
import { notFound } from './errors.js';
import { methodNotAllowedHandler } from './method-not-allowed.js';
import { createMetrics, requestObservability, requestObserver, unmatchedRoute, type Registry } from './observability.js';
import { assessReadiness, type Dependencies } from './readiness.js';
import { requestTarget } from './request-target.js';
import { formatProblem } from './response-format.js';
import { scrapeMetrics } from './workers.js';

export interface ServiceRuntimeOptions {
  name: string;
  logger: Logger;
  host: string;
  port: number;
  shutdownTimeoutMs: number;
  /** The service's metrics registry, for its own figures beside the HTTP and process ones; one is made when absent. */
  metrics?: Registry;
  /** Mounts the service's own routes; health and readiness come before them, the 405, 404 and error handlers after. */
  routes?: (app: Express) => void;
  /**
   * Proxies whose X-Forwarded-For is believed for the client's address (`req.ip`, a direct
   * route's `ip()`): addresses, CIDR ranges or Express's names (`loopback`), as its `trust proxy`
   * takes them. nginx's address on one machine when not given.
   */
  trustedProxies?: readonly string[];
  /** Routes served by plain node:http ahead of Express (see `DirectRoute`); paths they take never reach Express. */
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
  app.use(requestObservability(app, observe));
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
  app.use(methodNotAllowedHandler(app));
  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  const direct = options.direct?.length ? directDispatcher(options.direct, observe, logger, trustedProxies) : null;
  const server = http.createServer((req, res) => {
    // Express's router answers a target it cannot parse with its final handler's HTML page, past
    // every middleware of the app: answered here, it gets the one error shape and its log line.
    const target = requestTarget(req);
    if (target === null) {
      observe(req, res, unmatchedRoute);
      writeError(res, notFound(`No route for ${req.method} ${req.url}.`), logger, { method: req.method ?? 'GET', path: req.url ?? '' });
      return;
    }
    if (!direct?.(req, res, target)) app(req, res);
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
