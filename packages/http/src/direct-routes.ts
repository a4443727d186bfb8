import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import FindMyWay from 'find-my-way';
import proxyAddr from 'proxy-addr';
import type { Logger } from '@tributary/logger';
import { afterBody, carriesBody } from './after-body.js';
import { writeError } from './error-handler.js';
import { methodNotAllowed } from './errors.js';
import { formatProblem } from './response-format.js';
import { inAllowOrder } from './method-not-allowed.js';
import { unmatchedRoute, type ObserveRequest } from './observability.js';
import { withDoc, type OperationDoc } from './openapi.js';
import type { RequestTarget } from './request-target.js';
import type { MountedRoute } from './route-table.js';

/** Which proxies' X-Forwarded-For is believed unless the service is told otherwise: the front door's (nginx's), on loopback. */
export const DEFAULT_TRUSTED_PROXIES: readonly string[] = ['127.0.0.1', '::1'];

export type DirectMethod = 'GET' | 'POST' | 'OPTIONS';

export interface DirectRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request's method, with HEAD read as GET: Express serves HEAD with GET's handler, and Node sends no body. */
  method: DirectMethod;
  /** The path as Express's router reads it: without the query string or a fragment, and without the host of an absolute-form target. */
  path: string;
  /** The query string parsed as Express parses it (node:querystring: a repeated key gives an array). */
  query: ParsedUrlQuery;
  /** The client's address as Express's `req.ip` gives it: X-Forwarded-For as far as trusted proxies set it. */
  ip: () => string | undefined;
}

/**
 * A route served by plain node:http ahead of Express, for the SDKs' hot paths where Express's
 * router and response helpers cost more than the work itself. It still gets what every route gets
 * from the runtime: the request id, the log line (at debug when successful) and metrics, the one
 * error shape (a thrown `HttpError` is answered like in Express) and a 405 with `Allow` for other
 * methods.
 */
export interface DirectRoute {
  /** Paths matched as Express matches them by default: letter case ignored, a trailing slash allowed. */
  paths: readonly string[];
  methods: readonly DirectMethod[];
  handle: (request: DirectRequest) => Promise<void>;
  /** For the OpenAPI document, which reads it through `directRouteTable`. */
  doc?: OperationDoc;
}

/**
 * A class rather than an object literal with an `ip` closure: services run through tsx, whose
 * esbuild `keepNames` gives every named closure a `defineProperty` call each time it is made.
 */
class Request implements DirectRequest {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly method: DirectMethod,
    readonly path: string,
    readonly query: ParsedUrlQuery,
    private readonly addresses: ClientAddresses,
  ) {}

  ip(): string | undefined {
    return this.addresses.of(this.req);
  }
}

/** Address pairs remembered at most; past it all are forgotten at once, so a flood of new ones costs little. */
const MAX_ADDRESS_PAIRS = 10_000;

/**
 * `proxyAddr` remembered per socket address and X-Forwarded-For value, the only things it reads:
 * parsing and checking every address of the header against the trusted ranges cost more than
 * the lookup, and requests come again and again through the same proxy for the same clients.
 */
class ClientAddresses {
  private readonly known = new Map<string, Map<string, string | undefined>>();
  private size = 0;
  private readonly trust: ReturnType<typeof proxyAddr.compile>;

  constructor(trustedProxies: readonly string[]) {
    this.trust = proxyAddr.compile([...trustedProxies]);
  }

  of(req: IncomingMessage): string | undefined {
    const socket = req.socket.remoteAddress;
    const header = req.headers['x-forwarded-for'];
    if (socket === undefined || (header !== undefined && typeof header !== 'string')) return proxyAddr(req, this.trust);
    const forwarded = header ?? '';
    let bySocket = this.known.get(socket);
    if (bySocket?.has(forwarded)) return bySocket.get(forwarded);
    const address = proxyAddr(req, this.trust);
    if (this.size >= MAX_ADDRESS_PAIRS) {
      this.known.clear();
      this.size = 0;
      bySocket = undefined;
    }
    if (!bySocket) this.known.set(socket, (bySocket = new Map()));
    bySocket.set(forwarded, address);
    this.size++;
    return address;
  }
}

const DIRECT_FORMATS = ['json'] as const;

interface Served {
  route: DirectRoute;
  allow: string[];
  served: () => string;
}

/**
 * A request handler for the direct routes: answers a request whose path one of them takes and
 * returns true, or returns false and leaves the request to Express.
 */
export function directDispatcher(
  routes: readonly DirectRoute[],
  observe: ObserveRequest,
  logger: Logger,
  trustedProxies: readonly string[] = DEFAULT_TRUSTED_PROXIES,
): (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => boolean {
  // Every method finds the route, so that the others are answered here with a 405 and `Allow`.
  const router = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true });
  for (const route of routes) {
    const allow = inAllowOrder(new Set(route.methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]))));
    // Made once here rather than per request: what the observer labels a request with.
    for (const pattern of route.paths) router.all(pattern, () => undefined, { route, allow, served: () => pattern } satisfies Served);
  }
  const addresses = new ClientAddresses(trustedProxies);
  return (req, res, { path, query }) => {
    const found = router.find((req.method ?? 'GET') as FindMyWay.HTTPMethod, path)?.store as Served | undefined;
    if (!found) return false;
    const { route, allow } = found;
    const method = req.method ?? 'GET';
    const served = allow.includes(method);
    observe(req, res, served ? found.served : unmatchedRoute, true);
    const dispatch = () => {
      if (!served) {
        // As Express's routes answer through methodNotAllowedHandler.
        if (method === 'OPTIONS') {
          res.statusCode = 204;
          res.setHeader('Allow', [...allow, 'OPTIONS'].join(', '));
          res.end();
        } else {
          writeError(res, methodNotAllowed(method, allow), logger, { method, path });
        }
        return;
      }
      const parsed = parseQuery(query);
      // The SDK endpoints answer JSON only.
      const refused = formatProblem(parsed.format, DIRECT_FORMATS);
      if (refused) {
        writeError(res, refused, logger, { method, path });
        return;
      }
      const request = new Request(req, res, (method === 'HEAD' ? 'GET' : method) as DirectMethod, path, parsed, addresses);
      route.handle(request).catch((error: unknown) => writeError(res, error, logger, { method, path }));
    };
    // Only a POST's body is read (a GET's data comes in its query): any other is let through
    // first, or nginx would close the connection after the answer (see afterBody). Seen in the
    // chaos suite: a GET /decide/ with a 2 MB body, then a request on the same connection, unanswered.
    if (method !== 'POST' && carriesBody(req)) afterBody(req, dispatch);
    else dispatch();
    return true;
  };
}

/** The direct routes as `mountedRoutes` lists Express's, for the OpenAPI document. */
export function directRouteTable(routes: readonly DirectRoute[]): MountedRoute[] {
  return routes.flatMap((route) => {
    const documented = withDoc(() => undefined, route.doc ?? {});
    return route.paths.flatMap((path) => route.methods.map((method) => ({ method, path, handlers: [documented] })));
  });
}
