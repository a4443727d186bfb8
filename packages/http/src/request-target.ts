import type { IncomingMessage } from 'node:http';
import parseUrl from 'parseurl';

export interface RequestTarget {
  path: string;
  query: string;
}

/**
 * A request's path and query string as Express's router reads them, by the same parser (which
 * keeps its answer on the request, so the router does not parse again): a fragment is in
 * neither, and an absolute-form target (`POST http://host/path`) gives its path. Null for a
 * target that parser refuses (it throws on some absolute forms, `http://[::1/path`), which
 * the service runtime answers with a 404, as Express would.
 */
export function requestTarget(req: IncomingMessage): RequestTarget | null {
  let url: ReturnType<typeof parseUrl>;
  try {
    url = parseUrl(req);
  } catch {
    return null;
  }
  if (!url?.pathname) return null;
  return { path: url.pathname, query: typeof url.query === 'string' ? url.query : '' };
}
