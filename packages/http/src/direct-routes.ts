import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import proxyAddr from 'proxy-addr';
import type { Logger } from '@tributary/logger';
import { afterBody, carriesBody } from './after-body.js';
import { writeError } from './error-handler.js';
import { formatProblem } from './response-format.js';
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
 * A route served by plain node:http instead of Express, for the SDKs' hot paths where Express's
 * router and response helpers cost more than the work itself. It still gets what every route gets
 * from the runtime: the request id, the log line (at debug when successful) and metrics, the one
 * error shape (a thrown `HttpError` is answered like in Express), and its place in the one route
 * table, so its path, HEAD, 404 and 405 rules are an Express route's.
 */
export interface DirectRoute {
  /** Paths matched as every route's are (see `RouteTable`): letter case ignored, a trailing slash allowed. */
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

/**
 * Serves a request the route table gave to a direct route: for one of the methods it declares,
 * or HEAD where it declares GET.
 */
export function directServer(
  logger: Logger,
  trustedProxies: readonly string[] = DEFAULT_TRUSTED_PROXIES,
): (route: DirectRoute, req: IncomingMessage, res: ServerResponse, target: RequestTarget) => void {
  const addresses = new ClientAddresses(trustedProxies);
  return (route, req, res, { path, query }) => {
    const method = req.method ?? 'GET';
    const serve = () => {
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
    if (method !== 'POST' && carriesBody(req)) afterBody(req, serve);
    else serve();
  };
}

/** The direct routes as `mountedRoutes` lists Express's, for the OpenAPI document. */
export function directRouteTable(routes: readonly DirectRoute[]): MountedRoute[] {
  return routes.flatMap((route) => {
    const documented = withDoc(() => undefined, route.doc ?? {});
    return route.paths.flatMap((path) => route.methods.map((method) => ({ method, path, handlers: [documented] })));
  });
}
