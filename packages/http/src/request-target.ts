import type { IncomingMessage } from 'node:http';
import parseUrl from 'parseurl';

/**
 * A request's path and query string as Express's router reads them, by the same parser (which
 * keeps its answer on the request, so the router does not parse again): a fragment is in neither,
 * and an absolute-form target (`GET http://host/path`) gives its path. Cut at the first `?`, a
 * fragment stayed in the path, so such a request missed its direct route or was counted as
 * unmatched, and stayed in the last query value.
 */
export function requestTarget(req: IncomingMessage): { path: string; query: string } {
  const url = parseUrl(req);
  return { path: url?.pathname ?? '/', query: typeof url?.query === 'string' ? url.query : '' };
}
