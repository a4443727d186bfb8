import net from 'node:net';
import { unauthorized } from './errors.js';
import { startProbe } from './probe-fixture.js';
import type { ServiceRuntime } from './service-runtime.js';

let runtime: ServiceRuntime;
beforeAll(async () => {
  runtime = await startProbe({
    routes: (app) => {
      app.get('/express', (_req, res) => res.json({ answered: true }));
      // As the api's key check: refused before any route reads the body.
      app.post('/refused', (_req, _res, next) => next(unauthorized('No key was given.')));
    },
    // As decide's and capture's GET forms: the answer comes from the query, the body is never read.
    direct: [
      {
        paths: ['/probe'],
        methods: ['GET', 'POST'],
        handle: async ({ res }) => {
          res.setHeader('Content-Type', 'application/json');
          res.end('{"answered":true}');
        },
      },
    ],
  });
});
afterAll(() => runtime.shutdown('test'));

const statusLines = (text: string) => (text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length;

/**
 * Sends a request's headers and the first half of its body, and after a pause the rest of it
 * and a second request, on one connection: what had come back by the pause, and in all.
 */
function halfThenRest(head: string, body: Buffer, next = '/probe'): Promise<{ beforeRest: string; all: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(runtime.port, '127.0.0.1');
    let text = '';
    let beforeRest = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`two answers did not come within 10 s; got: ${text.slice(0, 300)}`));
    }, 10_000);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (statusLines(text) < 2) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ beforeRest, all: text });
    });
    socket.on('error', reject);
    const half = body.length / 2;
    socket.write(Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`), body.subarray(0, half)]));
    setTimeout(() => {
      beforeRest = text;
      socket.write(Buffer.concat([body.subarray(half), Buffer.from(`GET ${next} HTTP/1.1\r\nHost: x\r\n\r\n`)]));
    }, 300);
  });
}

describe('a route that does not read the body', () => {
  const body = Buffer.alloc(1024 * 1024, 0x61);

  it("answers a direct route's GET with a body once the body has all arrived, and the connection carries the next request", async () => {
    const { beforeRest, all } = await halfThenRest('GET /probe HTTP/1.1\r\nHost: x\r\n', body);
    expect(beforeRest).toBe('');
    expect(all).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"answered":true\}HTTP\/1\.1 200 OK\r\n[\s\S]*\{"answered":true\}$/);
  });

  it("answers an Express route's GET with a body once the body has all arrived, too", async () => {
    const { beforeRest, all } = await halfThenRest('GET /express HTTP/1.1\r\nHost: x\r\n', body, '/express');
    expect(beforeRest).toBe('');
    expect(all).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"answered":true\}HTTP\/1\.1 200 OK\r\n[\s\S]*\{"answered":true\}$/);
  });

  it('answers an error given before any route read the body (a 401) once the body has all arrived, too (it was answered at once)', async () => {
    const { beforeRest, all } = await halfThenRest('POST /refused HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n', body, '/express');
    expect(beforeRest).toBe('');
    expect(all).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n[\s\S]*HTTP\/1\.1 200 OK\r\n[\s\S]*\{"answered":true\}$/);
  });

  it('answers a method a direct route does not serve (405) once the body has all arrived, too', async () => {
    const { beforeRest, all } = await halfThenRest('PUT /probe HTTP/1.1\r\nHost: x\r\n', body);
    expect(beforeRest).toBe('');
    expect(all).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n[\s\S]*HTTP\/1\.1 200 OK\r\n/);
  });
});
