import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '@tributary/test-support';
import { ExportError, NonRetryableExportError } from './export-error.js';
import { HttpDestination, type HttpDestinationConfig } from './http-destination.js';
import { eventRecord, exportPart, personRecord } from './test-parts.js';

/** A real HTTP server on this machine, answering as it is told and keeping what it was sent. */
interface Receiver {
  url: string;
  requests: { path: string; contentType: string | undefined; body: { api_key: string; historical_migration: boolean; batch: Record<string, unknown>[] } }[];
  status: number;
  server: Server;
}
const receivers: Receiver[] = [];
afterAll(() => Promise.all(receivers.map((r) => new Promise((resolve) => r.server.close(resolve)))));

async function receiver(): Promise<Receiver> {
  const read = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const state = { requests: [], status: 200 } as unknown as Receiver;
  state.server = createServer((request, response) => {
    void read(request).then((body) => {
      state.requests.push({ path: request.url ?? '', contentType: request.headers['content-type'], body: JSON.parse(body) as Receiver['requests'][number]['body'] });
      response.writeHead(state.status, { 'content-type': 'application/json' }).end(state.status === 200 ? '{"status":1}' : '{"type":"server_error","detail":"try later"}');
    });
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/batch/`;
  receivers.push(state);
  return state;
}

const config = (url: string, overrides: Partial<HttpDestinationConfig> = {}): HttpDestinationConfig => ({ url, token: 'phc_receiving_project', include_events: null, exclude_events: null, ...overrides });

describe('HTTP destination', () => {
  it("POSTs the part's events to /batch/ as PostHog's HTTP export does", async () => {
    const target = await receiver();
    const records = Array.from({ length: 5 }, (_, i) => eventRecord(i));
    const result = await new HttpDestination(config(target.url)).write(exportPart(records));
    expect(target.requests).toHaveLength(1);
    const [request] = target.requests;
    expect(request!.path).toBe('/batch/');
    expect(request!.contentType).toBe('application/json');
    expect(request!.body).toEqual({
      api_key: 'phc_receiving_project',
      historical_migration: true,
      batch: records.map((r) => ({ uuid: r.uuid, distinct_id: r.distinct_id, timestamp: r.timestamp, event: r.event, properties: { ...(r.properties as object), $geoip_disable: true } })),
    });
    expect(result).toEqual({ records: 5, bytes: Buffer.byteLength(JSON.stringify(request!.body)) });
  });

  it('sends a large part as several batches within the limits, every event once and in order', async () => {
    const target = await receiver();
    const records = Array.from({ length: 25 }, (_, i) => eventRecord(i, {}, 500));
    await new HttpDestination(config(target.url), { maxEvents: 10, maxBytes: 4000 }).write(exportPart(records));
    expect(target.requests.length).toBeGreaterThan(3);
    for (const { body } of target.requests) {
      expect(body.batch.length).toBeLessThanOrEqual(10);
      expect(JSON.stringify(body.batch).length).toBeLessThanOrEqual(4000);
    }
    expect(target.requests.flatMap((r) => r.body.batch.map((e) => e.uuid))).toEqual(records.map((r) => r.uuid));
  });

  it('sends only the included events, without the excluded ones', async () => {
    const target = await receiver();
    const result = await new HttpDestination(config(target.url, { include_events: ['signed_up'] })).write(exportPart(Array.from({ length: 9 }, (_, i) => eventRecord(i))));
    expect(target.requests[0]!.body.batch.map((e) => e.event)).toEqual(['signed_up', 'signed_up', 'signed_up']);
    expect(result.records).toBe(3);
  });

  it('fails so the run retries, naming the endpoint and the status, when the receiver answers 500', async () => {
    const target = await receiver();
    target.status = 500;
    const failure = await new HttpDestination(config(target.url)).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExportError);
    expect(failure).not.toBeInstanceOf(NonRetryableExportError);
    expect((failure as Error).message).toBe(`HTTP endpoint ${target.url}: answered 500: {"type":"server_error","detail":"try later"}`);
  });

  it('fails for good when the receiver refuses the batch with a 4xx', async () => {
    const target = await receiver();
    target.status = 401;
    await expect(new HttpDestination(config(target.url)).write(exportPart([eventRecord(1)]))).rejects.toThrow(NonRetryableExportError);
    await expect(new HttpDestination(config(target.url)).write(exportPart([eventRecord(1)]))).rejects.toThrow(/answered 401/);
  });

  it('fails so the run retries when nothing listens', async () => {
    const url = `http://127.0.0.1:${await freePort()}/batch/`;
    const failure = await new HttpDestination(config(url)).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExportError);
    expect(failure).not.toBeInstanceOf(NonRetryableExportError);
    expect((failure as Error).message).toMatch(/^HTTP endpoint http:\/\/127\.0\.0\.1:\d+\/batch\/: fetch failed: .*ECONNREFUSED/);
  });

  it('refuses to export persons, as PostHog exports only events over HTTP', async () => {
    const target = await receiver();
    await expect(new HttpDestination(config(target.url)).write(exportPart([personRecord('a', { person: 1, mapping: 1 })], 0, 'persons'))).rejects.toThrow(NonRetryableExportError);
    expect(target.requests).toEqual([]);
  });
});
