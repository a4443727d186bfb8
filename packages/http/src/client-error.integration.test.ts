import net from 'node:net';
import { startProbe } from './probe-fixture.js';
import type { ServiceRuntime } from './service-runtime.js';

let runtime: ServiceRuntime;
beforeAll(async () => {
  runtime = await startProbe();
});
afterAll(() => runtime.shutdown('test'));

/** Sends bytes as they are and reads until the server closes the connection. */
function raw(bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(runtime.port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

describe('a request node:http cannot parse, sent to a service', () => {
  it.each([
    ['a method HTTP does not define', Buffer.from('FOO /_health HTTP/1.1\r\nHost: x\r\n\r\n'), 'unknown_method'],
    ['a raw byte in the path', Buffer.concat([Buffer.from('GET /api/environments/'), Buffer.from([0xff, 0xfe]), Buffer.from('/events/ HTTP/1.1\r\nHost: x\r\n\r\n')]), 'bad_request'],
  ])('%s is a 400 in the error shape (it was a bare 400 without a body)', async (_name, bytes, code) => {
    const answer = await raw(bytes);
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ type: 'invalid_request', code, detail: expect.any(String), attr: null });
  });

  it('the service goes on answering', async () => {
    expect((await fetch(`http://127.0.0.1:${runtime.port}/_health`)).status).toBe(200);
  });
});
