import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorBody } from './errors.js';

/** node:http's parser errors carry llhttp's code (`HPE_INVALID_METHOD`) and its reason in words. */
export interface ClientError extends Error {
  code?: string;
  reason?: string;
}

/**
 * The answer to a request node:http could not parse (a method HTTP does not define, a raw byte
 * in the path, headers past its limit), in the one error shape: node:http's own is a bare
 * `400 Bad Request` without a body. The statuses are node:http's.
 */
export function clientErrorResponse(error: ClientError): string {
  const [status, code, detail]: [number, string, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request was not sent in time.']
        : error.code === 'HPE_INVALID_METHOD'
          ? [400, 'unknown_method', 'The request method is not one HTTP defines; use GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS.']
          : [400, 'bad_request', `The request is not valid HTTP/1.1${error.reason ? `: ${error.reason.toLowerCase()}` : ''}.`];
  const body = JSON.stringify({ type: 'invalid_request', code, detail, attr: null } satisfies ErrorBody);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** Answers node:http's parse errors with `clientErrorResponse`, where node:http itself would answer at all. */
export function answerClientErrors(server: Server): void {
  const responses = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req, res) => responses.set(req.socket, res));
  server.on('clientError', (error: ClientError, socket: Duplex) => {
    // As node:http does: a broken connection gets nothing, and a response already under way must not be corrupted.
    const answering = responses.get(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || (answering?.headersSent && !answering.writableFinished)) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(error));
  });
}
