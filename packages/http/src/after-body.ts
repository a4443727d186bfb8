import type { IncomingMessage } from 'node:http';

/** The most of a body read only to be dropped; beyond it the connection is dropped. nginx passes on no more than this. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Calls `then` with the body's size once the rest of a request body that will not be read has
 * arrived, dropping it, or once the request closed with its body cut off (`complete` false).
 * nginx streams bodies to the services (`proxy_request_buffering off`): answered before the body
 * has all gone through, it can neither finish passing the body on nor keep the client's
 * connection, which it closes after an answer that said keep-alive, or resets before the client
 * has read the answer. A client that sends its next request on that connection gets no answer.
 */
export function afterBody(req: IncomingMessage, then: (bytes: number, complete: boolean) => void): void {
  let drained = 0;
  const count = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) req.socket.destroy();
  };
  let done = false;
  // 'close' too: a body cut off (the client went, or a reader before gave up and destroyed the
  // request) never ends, and the answer, or what is kept of the request, would wait forever.
  const finish = () => {
    if (done) return;
    done = true;
    req.off('data', count);
    then(drained, req.complete);
  };
  req.on('data', count);
  req.once('end', finish);
  req.once('close', finish);
  if (req.destroyed) finish();
  else req.resume();
}

/** Whether a request says a body follows its headers. */
export const carriesBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
