import { jest } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterBody } from './after-body.js';

/** A request body as afterBody reads it: a stream. */
function requestBody(): PassThrough {
  return Object.assign(new PassThrough(), { socket: { destroy: () => undefined } });
}

describe('afterBody', () => {
  it('answers with the size of the body it dropped once the body ended', async () => {
    const stream = requestBody();
    const done = new Promise<number>((resolve) => afterBody(stream as unknown as IncomingMessage, resolve));
    stream.write('abc');
    stream.end('de');
    expect(await done).toBe(5);
  });

  it('never answers for a body cut off, and lets go of it: no one is there to answer, and its route must not run', async () => {
    const stream = requestBody();
    const then = jest.fn();
    afterBody(stream as unknown as IncomingMessage, then);
    stream.write('abc');
    await new Promise((resolve) => setImmediate(resolve));
    stream.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(then).not.toHaveBeenCalled();
    expect([stream.listenerCount('data'), stream.listenerCount('end')]).toEqual([0, 0]);
  });
});
