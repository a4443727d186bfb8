import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@tributary/logger';
import { afterBody, carriesBody } from './after-body.js';
import { HttpError, badRequest, internalErrorBody, notFound, payloadTooLarge, serviceUnavailable } from './errors.js';
import { isStoreUnavailable } from './store-unavailable.js';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/** Maps body-parser's own failures onto the one error shape. */
function fromBodyParser(error: BodyParserError): HttpError | null {
  switch (error.type) {
    case 'entity.too.large':
      return payloadTooLarge(`Request body is larger than the limit of ${error.limit ?? 'the configured'} bytes.`);
    case 'entity.parse.failed':
      return badRequest(`Request body is not valid JSON: ${error.message}`, null, 'parse_error');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return badRequest(error.message, null, 'unsupported_encoding');
    case 'request.aborted':
      return badRequest('Request was aborted by the client.', null, 'aborted');
    default:
      return null;
  }
}

/**
 * Express and its router mark a request's own faults with a 4xx `status`: a path parameter that
 * is not valid percent-encoded UTF-8 is a `URIError` with status 400. Only messages meant for the
 * client (`expose`, the http-errors convention) are passed on.
 */
function fromRequestFault(error: BodyParserError & { statusCode?: number; expose?: boolean }): HttpError | null {
  const status = error.status ?? error.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  if (error instanceof URIError) return badRequest(`The path is not valid percent-encoded UTF-8: ${error.message}.`, null, 'invalid_path');
  return new HttpError(status, 'invalid_request', 'invalid_request', error.expose ? error.message : 'The request is malformed.');
}

function writeJson(res: ServerResponse, status: number, headers: Record<string, string>, value: unknown): void {
  const body = JSON.stringify(value);
  res.statusCode = status;
  for (const [name, header] of Object.entries(headers)) res.setHeader(name, header);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/**
 * The one place an error becomes a response, for Express's routes and the runtime's direct ones
 * alike. Internal details are logged, never returned.
 */
export function writeError(res: ServerResponse, error: unknown, logger: Logger, request: { method: string; path: string }): void {
  const fault = (error !== null && typeof error === 'object' ? error : {}) as BodyParserError;
  const known =
    error instanceof HttpError
      ? error
      : (fromBodyParser(fault) ??
        fromRequestFault(fault) ??
        // A store away is an outage to wait out, not a fault of the server's: 503, as SDKs and load balancers expect.
        (isStoreUnavailable(error) ? serviceUnavailable('A store this request needs is not answering; retry later.') : null));
  // The request's id (see requestObserver), so that this line and the request's own can be
  // joined: a direct route's request line is at debug when the status sent was a success.
  const reqId = () => res.getHeader('X-Request-Id');
  if (known) {
    if (known.status >= 500) logger.warn({ err: error, req_id: reqId(), path: request.path }, known.detail);
    // Answered only while nothing was: a deferred answer may find that something else was sent meanwhile.
    const answer = () => (res.headersSent ? res.end() : writeJson(res, known.status, known.headers, known.toBody()));
    // An answer given before the body has all arrived (too large, or refused before any route read it) lets it through first.
    if (res.req && !res.req.complete && carriesBody(res.req)) afterBody(res.req, answer);
    else answer();
    return;
  }
  logger.error({ err: error, req_id: reqId(), method: request.method, path: request.path }, 'unhandled error');
  if (res.headersSent) {
    res.end();
    return;
  }
  writeJson(res, 500, {}, internalErrorBody);
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => writeError(res, error, logger, req);
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(notFound(`No route for ${req.method} ${req.path}.`));
};
