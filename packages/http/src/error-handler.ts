import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@tributary/logger';
import { HttpError, badRequest, internalErrorBody, notFound, payloadTooLarge } from './errors.js';

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
  const known = error instanceof HttpError ? error : fromBodyParser(error as BodyParserError);
  if (known) {
    if (known.status >= 500) logger.warn({ err: error, path: request.path }, known.detail);
    writeJson(res, known.status, known.headers, known.toBody());
    return;
  }
  logger.error({ err: error, method: request.method, path: request.path }, 'unhandled error');
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
