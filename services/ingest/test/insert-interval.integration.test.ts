import { waitFor } from '@tributary/test-support';
import { startIngestHarness, type IngestHarness } from './ingest-harness.js';

/**
 * Inserts wait INGEST_INSERT_INTERVAL_MS to gather rows, but not once the consumer has caught
 * up: an event that arrives while nothing else is queued shows after the quiet interval.
 */
let h: IngestHarness;

beforeAll(async () => {
  h = await startIngestHarness({ ingestInsertIntervalMs: 60_000, ingestInsertQuietIntervalMs: 250 });
  await h.startConsumer();
}, 60_000);

afterAll(async () => {
  await h.close();
});

const shown = (uuid: string, timeoutMs: number) => waitFor(async () => (await h.events()).some((e) => e.uuid === uuid), { what: `event ${uuid}`, timeoutMs });

test('an event that arrives after the previous insert shows within seconds, not after the whole insert interval', async () => {
  // The first insert of a process goes at once; it starts the interval.
  const [first] = await h.send([{ event: 'first', distinct_id: 'quiet-stream', properties: {} }]);
  await shown(first!, 30_000);
  const [second] = await h.send([{ event: 'second', distinct_id: 'quiet-stream', properties: {} }]);
  // Well within the 60 s interval: the process had nothing else to do, so the row did not wait for company.
  await expect(shown(second!, 10_000)).resolves.toBe(true);
}, 60_000);
