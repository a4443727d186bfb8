import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';

/**
 * The CORS policy of every SDK endpoint, as Express middleware. Browsers send events and ask
 * for flags cross-origin with credentials, so the origin is reflected rather than `*`.
 */
export const sdkCors = cors({ origin: true, credentials: true, maxAge: 86_400 });

/** Sets the CORS headers browsers need on any origin; true when that answered the request (a preflight). */
export function answeredByCors(req: IncomingMessage, res: ServerResponse): boolean {
  // What the middleware sets on a request other than a preflight, without the option objects and
  // callbacks it makes per request. Only while no Vary header is set, which it would append to.
  if (req.method !== 'OPTIONS' && !res.hasHeader('vary')) {
    const origin = req.headers.origin;
    if (origin) res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    return false;
  }
  let passedOn = false;
  sdkCors(req, res, () => {
    passedOn = true;
  });
  return !passedOn;
}
