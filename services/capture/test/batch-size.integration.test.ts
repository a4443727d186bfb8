import { startCapture, type CaptureHarness } from './capture-harness.js';

/**
 * The spec's rule 2 of `/batch/`: the number of events in a batch is not limited; only the body
 * size is (20 MB by default, after decompression).
 */
let capture: CaptureHarness;

beforeAll(async () => {
  capture = await startCapture();
}, 60_000);

afterAll(async () => {
  await capture.close();
});

it('publishes every event of a 20,000-event batch: /batch/ has no event-count limit', async () => {
  const count = 20_000;
  // 200 distinct ids, 100 events each: well under the overflow rate, so every event stays on the realtime topic.
  const batch = Array.from({ length: count }, (_, i) => ({ event: `e${i}`, distinct_id: `user-${i % 200}` }));
  const body = JSON.stringify({ api_key: capture.tenant.project.api_token, batch });
  expect(Buffer.byteLength(body)).toBeLessThan(20 * 1024 * 1024);
  const response = await fetch(`${capture.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ status: 1 });
  const published = await capture.readEvents(capture.topics.realtime, count);
  expect(published).toHaveLength(count);
  expect(new Set(published.map(({ event }) => JSON.parse(event.data).event)).size).toBe(count);
});
