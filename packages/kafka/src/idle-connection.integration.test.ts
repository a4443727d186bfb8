import { createRequire } from 'node:module';
import { jest } from '@jest/globals';
import { createLogger } from '@tributary/logger';
import { testConfig } from '@tributary/test-support';
import { createKafka, createProducer } from './client.js';

/**
 * kafkajs 2.2.4 re-armed a 1 ms timer on every broker connection after its first answer, for as
 * long as the connection lived, whether or not a request was waiting (tulios/kafkajs#1556): each
 * idle service then woke a thousand times a second, about 4% of a core per process, which the
 * ingest processes and the stores had to share with it. patches/kafkajs+2.2.4.patch stops it.
 */
interface RequestQueuePrototype {
  checkPendingRequests(): void;
}
const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueuePrototype };

it('a connected producer with nothing to send does not keep checking for requests to send', async () => {
  const checks = jest.spyOn(RequestQueue.prototype, 'checkPendingRequests');
  const producer = createProducer(createKafka(testConfig(), createLogger('test', 'silent'), 'idle-test'));
  try {
    await producer.connect();
    await new Promise((resolve) => setTimeout(resolve, 200));
    checks.mockClear();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Unpatched, this was about 400 (a check per millisecond and timer granularity).
    expect(checks.mock.calls.length).toBeLessThan(5);
  } finally {
    checks.mockRestore();
    await producer.disconnect();
  }
});
