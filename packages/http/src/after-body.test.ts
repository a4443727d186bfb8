import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterBody } from './after-body.js';

/** A request body as afterBody reads it: a stream, with `complete` set by the HTTP parser once the body's end arrived. */
function requestBody(): { req: IncomingMessage; stream: PassThrough & { complete: boolean } } {
  const stream = Object.assign(new PassThrough(), { complete: false, socket: { destroy: () => undefined } });
  return { req: stream as unknown as IncomingMessage, stream };
}

const outcome = (req: IncomingMessage) => new Promise<{ bytes: number; complete: boolean }>((resolve) => afterBody(req, (bytes, complete) => resolve({ bytes, complete })));

describe('afterBody', () => {
  it('answers with the size of the body it dropped once the body ended', async () => {
    const { req, stream } = requestBody();
    const done = outcome(req);
    stream.write('abc');
    stream.complete = true;
    stream.end('de');
    expect(await done).toEqual({ bytes: 5, complete: true });
  });

  it('answers once a body cut off closes, which never ends (it waited forever)', async () => {
    const { req, stream } = requestBody();
    const done = outcome(req);
    stream.write('abc');
    await new Promise((resolve) => setImmediate(resolve));
    stream.destroy();
    expect(await done).toEqual({ bytes: 3, complete: false });
  });

  it('answers at once for a request already destroyed', async () => {
    const { req, stream } = requestBody();
    stream.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await outcome(req)).toEqual({ bytes: 0, complete: false });
  });
});
