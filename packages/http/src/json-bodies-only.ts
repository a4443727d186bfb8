import type { RequestHandler } from 'express';
import { afterBody, carriesBody } from './after-body.js';
import { unsupportedMediaType } from './errors.js';

const READS_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * For services whose routes take JSON bodies only (the api), placed after the JSON parser. A
 * body the parser left unread is of another type: on a method whose routes read bodies it is a
 * 415 saying what to send, as PostHog's API answers (before, a form or text body reached the
 * route as no body at all, and the client heard that some field was required); on any other
 * method it is ignored, as PostHog does. A request no route takes never comes here: the runtime
 * answers it with the 404 or 405 that says so, as PostHog's, rather than a 415 that would send the
 * client to fix a body no route reads. Either way the body is let through first (see afterBody).
 */
export function jsonBodiesOnly(): RequestHandler {
  return (req, _res, next) => {
    if (!carriesBody(req) || req.readableEnded) return next();
    if (!READS_BODY.has(req.method)) return afterBody(req, () => next());
    const type = req.headers['content-type'];
    const named = type ? `Unsupported media type "${type}" in request` : 'The request body has no Content-Type';
    // A chunked body may turn out empty (a client streaming nothing): that is no body, not one of another type.
    afterBody(req, (bytes) => next(bytes === 0 ? undefined : unsupportedMediaType(`${named}: send the body as JSON, with Content-Type: application/json.`)));
  };
}
