import net from 'node:net';
import { payloadTooLarge } from './errors.js';
import { startProbe } from './probe-fixture.js';
import type { ServiceRuntime } from './service-runtime.js';

let runtime: ServiceRuntime;
beforeAll(async () => {
  runtime = await startProbe({
    // As capture and decide read bodies: stop at the limit, pause the stream, answer 413.
    routes: (app) =>
      app.post('/items', (req, _res, next) => {
        let read = 0;
        const onData = (chunk: Buffer) => {
          read += chunk.length;
          if (read <= 1024) return;
          req.off('data', onData);
          req.pause();
          next(payloadTooLarge('Request body is larger than the limit of 1024 bytes.'));
        };
        req.on('data', onData);
      }),
  });
});
afterAll(() => runtime.shutdown('test'));

/** Writes `bytes` on one connection and collects what comes back until `answers` status lines have arrived. */
function exchange(bytes: Buffer, answers: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(runtime.port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${answers} answers did not come within 10 s; got: ${text.slice(0, 300)}`));
    }, 10_000);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if ((text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length < answers) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    });
    socket.on('error', reject);
  });
}

describe('a body past the limit', () => {
  it('is answered with a 413 once it has all arrived, and the connection carries the next request (it was held unread, and nginx closed it after saying keep-alive)', async () => {
    const body = Buffer.alloc(4 * 1024 * 1024, 0x61);
    const request = Buffer.concat([
      Buffer.from(`POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`),
      body,
      Buffer.from('GET /_health HTTP/1.1\r\nHost: x\r\n\r\n'),
    ]);
    const text = await exchange(request, 2);
    expect(text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(text).toMatch(/"code":"payload_too_large"/);
    expect(text).toMatch(/HTTP\/1\.1 200 OK[\s\S]*"status":"ok"/);
  });
});
