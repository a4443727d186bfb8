import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@tributary/logger';
import { afterBody, carriesBody } from './after-body.js';
import { writeError } from './error-handler.js';
import { methodNotAllowed, notFound } from './errors.js';

/**
 * The answer to a request no route takes, given the methods routes take at its path (see
 * `RouteTable.allowed`): a 404 where there are none, else a 405 with `Allow`, or for `OPTIONS`
 * a 204 with the header alone. Direct and Express routes get it alike, so no route declares it.
 */
export function answerUnrouted(req: IncomingMessage, res: ServerResponse, path: string, allowed: readonly string[], logger: Logger): void {
  const method = req.method ?? 'GET';
  if (allowed.length === 0) return writeError(res, notFound(`No route for ${method} ${path}.`), logger, { method, path });
  if (method !== 'OPTIONS') return writeError(res, methodNotAllowed(method, allowed), logger, { method, path });
  const answer = () => {
    res.statusCode = 204;
    res.setHeader('Allow', [...allowed, 'OPTIONS'].join(', '));
    res.end();
  };
  // Answered once the body is through, or nginx would close the connection after the answer (see afterBody).
  if (carriesBody(req)) afterBody(req, answer);
  else answer();
}
