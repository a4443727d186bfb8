/**
 * Sends hostile requests and judges the answers. Well-formed HTTP goes through node:http on
 * keep-alive connections; requests node:http refuses to write (broken request lines, headers too
 * large, lying lengths) go over a raw socket, one connection each.
 */
import http from 'node:http';
import net from 'node:net';

export interface Answer {
  /** 0 when no answer came: the connection was reset or the request timed out. */
  status: number;
  body: string;
  contentType: string;
  error?: string;
  /**
   * The pooled connection the request went out on was found closed, with no answer: the request
   * that used it before, and how that was answered. A client must expect this of any pooled
   * connection (the server may close an idle one as it is reused) and send the request again.
   */
  staleAfter?: string;
  /** For a request that got no answer: whether its connection was new or reused, what it carried before, and when it failed. */
  connection?: string;
}

/** What each pooled connection carried last, to say what came before a connection found closed. */
const lastOnSocket = new WeakMap<object, string>();

/** The most of a body kept for judging: error bodies are small, and a 2xx is not read further. */
const KEEP_BYTES = 64 * 1024;

export function sendHttp(agent: http.Agent, url: URL, method: string, path: string, headers: Record<string, string>, body: Buffer | readonly Buffer[] | undefined, timeoutMs: number): Promise<Answer> {
  const parts = body === undefined ? undefined : Buffer.isBuffer(body) ? [body] : body;
  const length = parts?.reduce((n, part) => n + part.length, 0);
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: Answer) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    let req: http.ClientRequest;
    try {
      req = http.request({ agent, host: url.hostname, port: url.port, method, path, headers: length === undefined ? headers : { ...headers, 'content-length': String(length) } });
    } catch (error) {
      // node:http refused to write it (an invalid character, say): nothing reached the server.
      done({ status: -1, body: '', contentType: '', error: (error as Error).message });
      return;
    }
    req.setTimeout(timeoutMs, () => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    });
    const sent = `${method} ${path.slice(0, 100)}`;
    let before: string | undefined;
    req.on('socket', (socket) => {
      before = lastOnSocket.get(socket);
      lastOnSocket.set(socket, `${sent} (no answer)`);
    });
    req.on('response', (res) => {
      if (req.socket) lastOnSocket.set(req.socket, `${sent} -> ${res.statusCode} ${res.headers.connection ?? ''}`);
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (chunk: Buffer) => {
        if (kept < KEEP_BYTES) {
          chunks.push(chunk);
          kept += chunk.length;
        }
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), contentType: String(res.headers['content-type'] ?? '') }));
      res.on('error', (error) => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), contentType: String(res.headers['content-type'] ?? ''), error: error.message }));
    });
    const startedAt = Date.now();
    req.on('error', (error) => {
      const reset = (error as NodeJS.ErrnoException).code === 'ECONNRESET' || (error as NodeJS.ErrnoException).code === 'EPIPE';
      const connection = `${req.reusedSocket ? `reused connection, after ${before ?? 'unknown'}` : 'new connection'}; failed ${Date.now() - startedAt} ms after sending, at ${new Date().toISOString()}`;
      done({ status: 0, body: '', contentType: '', error: error.message, connection, ...(req.reusedSocket && reset ? { staleAfter: before ?? 'unknown' } : {}) });
    });
    // A server may answer (413, say) before reading a large body; the answer is what counts.
    for (const part of parts ?? []) req.write(part);
    req.end();
  });
}

/** One raw request on its own connection, read until the server closes it or the timeout passes. */
export function sendRaw(url: URL, bytes: Buffer, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let finished = false;
    const finish = (error?: string) => {
      if (finished) return;
      finished = true;
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(text)?.[1] ?? 0);
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      const contentType = /\r\ncontent-type:\s*([^\r\n]*)/i.exec(head)?.[1] ?? '';
      resolve({ status, body: split < 0 ? '' : text.slice(split + 4), contentType, ...(error && status === 0 ? { error } : {}) });
    };
    socket.setTimeout(timeoutMs, () => finish(`no answer within ${timeoutMs} ms`));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', (error) => finish(error.message));
    socket.write(bytes);
  });
}

const ERROR_TYPES = new Set(['invalid_request', 'authentication_error', 'permission_denied', 'throttled', 'server_error']);

/** Whether a body is the project's one error shape, naming the problem in `detail`. */
export function isErrorShape(body: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return false;
  }
  if (value === null || typeof value !== 'object') return false;
  const { type, code, detail, attr } = value as Record<string, unknown>;
  return typeof type === 'string' && ERROR_TYPES.has(type) && typeof code === 'string' && code !== '' && typeof detail === 'string' && detail.trim() !== '' && (attr === null || typeof attr === 'string');
}

export type Verdict = 'ok' | 'unexpected_5xx' | 'no_response' | 'non_json_4xx';

/** What the run holds against an answer: any 5xx, no answer at all, or a 4xx not in the error shape (HEAD answers have no body to judge). */
export function judge(method: string, answer: Answer): Verdict {
  if (answer.status === 0) return 'no_response';
  if (answer.status >= 500) return 'unexpected_5xx';
  if (answer.status >= 400 && method !== 'HEAD' && !isErrorShape(answer.body)) return 'non_json_4xx';
  return 'ok';
}
