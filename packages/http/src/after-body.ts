import type { IncomingMessage } from 'node:http';

/** The most of a body read only to be dropped; beyond it the connection is dropped. nginx passes on no more than this. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Calls `then` with the body's size once the rest of a request body that will not be read has
 * arrived, dropping it; never for a body cut off (the client went), whose request is answered by
 * no one and must not run its route.
 * nginx streams bodies to the services (`proxy_request_buffering off`): answered before the body
 * has all gone through, it can neither finish passing the body on nor keep the client's
 * connection, which it closes after an answer that said keep-alive, or resets before the client
 * has read the answer. A client that sends its next request on that connection gets no answer.
 */
export function afterBody(req: IncomingMessage, then: (bytes: number) => void): void {
  let drained = 0;
  const count = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) req.socket.destroy();
  };
  const ended = () => {
    req.off('close', cutOff);
    req.off('data', count);
    then(drained);
  };
  const cutOff = () => {
    req.off('end', ended);
    req.off('data', count);
  };
  req.on('data', count);
  req.once('end', ended);
  req.once('close', cutOff);
  req.resume();
}

/** Whether a request says a body follows its headers. */
export const carriesBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
