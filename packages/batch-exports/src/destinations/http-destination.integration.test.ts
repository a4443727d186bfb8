import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, testConfig } from '@tributary/test-support';
import { DestinationGuard, type Resolve } from '../destination-address/destination-guard.js';
import { destinationPolicy } from '../destination-address/stack-destinations.js';
import { ExportError, NonRetryableExportError } from './export-error.js';
import { HttpDestination, type HttpDestinationConfig } from './http-destination.js';
import { eventRecord, exportPart, localGuard, personRecord } from './test-parts.js';

/** A real HTTP server on this machine, answering as it is told and keeping what it was sent. */
interface Receiver {
  url: string;
  requests: { path: string; host: string | undefined; contentType: string | undefined; body: { api_key: string; historical_migration: boolean; batch: Record<string, unknown>[] } }[];
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
      state.requests.push({ path: request.url ?? '', host: request.headers.host, contentType: request.headers['content-type'], body: JSON.parse(body) as Receiver['requests'][number]['body'] });
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
    const result = await new HttpDestination(config(target.url), localGuard).write(exportPart(records));
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
    await new HttpDestination(config(target.url), localGuard, { maxEvents: 10, maxBytes: 4000 }).write(exportPart(records));
    expect(target.requests.length).toBeGreaterThan(3);
    for (const { body } of target.requests) {
      expect(body.batch.length).toBeLessThanOrEqual(10);
      expect(JSON.stringify(body.batch).length).toBeLessThanOrEqual(4000);
    }
    expect(target.requests.flatMap((r) => r.body.batch.map((e) => e.uuid))).toEqual(records.map((r) => r.uuid));
  });

  it('sends only the included events, without the excluded ones', async () => {
    const target = await receiver();
    const result = await new HttpDestination(config(target.url, { include_events: ['signed_up'] }), localGuard).write(exportPart(Array.from({ length: 9 }, (_, i) => eventRecord(i))));
    expect(target.requests[0]!.body.batch.map((e) => e.event)).toEqual(['signed_up', 'signed_up', 'signed_up']);
    expect(result.records).toBe(3);
  });

  it('fails so the run retries, naming the endpoint and the status, when the receiver answers 500', async () => {
    const target = await receiver();
    target.status = 500;
    const failure = await new HttpDestination(config(target.url), localGuard).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExportError);
    expect(failure).not.toBeInstanceOf(NonRetryableExportError);
    expect((failure as Error).message).toBe(`HTTP endpoint ${target.url}: answered 500: {"type":"server_error","detail":"try later"}`);
  });

  it('fails for good when the receiver refuses the batch with a 4xx', async () => {
    const target = await receiver();
    target.status = 401;
    await expect(new HttpDestination(config(target.url), localGuard).write(exportPart([eventRecord(1)]))).rejects.toThrow(NonRetryableExportError);
    await expect(new HttpDestination(config(target.url), localGuard).write(exportPart([eventRecord(1)]))).rejects.toThrow(/answered 401/);
  });

  it('fails so the run retries when nothing listens', async () => {
    const url = `http://127.0.0.1:${await freePort()}/batch/`;
    const failure = await new HttpDestination(config(url), localGuard).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExportError);
    expect(failure).not.toBeInstanceOf(NonRetryableExportError);
    expect((failure as Error).message).toMatch(/^HTTP endpoint http:\/\/127\.0\.0\.1:\d+\/batch\/: connect ECONNREFUSED/);
  });

  it('refuses to export persons, as PostHog exports only events over HTTP', async () => {
    const target = await receiver();
    await expect(new HttpDestination(config(target.url), localGuard).write(exportPart([personRecord('a', { person: 1, mapping: 1 })], 0, 'persons'))).rejects.toThrow(NonRetryableExportError);
    expect(target.requests).toEqual([]);
  });

  describe("only ever reaches the address it checked", () => {
    const portOf = (url: string) => Number(new URL(url).port);
    /** Allows only these loopback ports, resolving names with `resolve`. */
    const guardFor = (ports: number[], resolve: Resolve) => new DestinationGuard(destinationPolicy(testConfig({ batchExportAllowedDestinations: ports.map((port) => `127.0.0.1:${port}`) })), resolve);

    it('does not follow a redirect, and quotes nothing of the answer', async () => {
      const inside = await receiver();
      const redirecting = createServer((_, response) => response.writeHead(307, { location: `${inside.url}?query=SELECT+1` }).end('body of the redirect: SECRET'));
      await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
      receivers.push({ server: redirecting } as Receiver);
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/batch/`;
      const failure = await new HttpDestination(config(url), guardFor([portOf(url), portOf(inside.url)], async () => [])).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(NonRetryableExportError);
      expect((failure as Error).message).toBe(`HTTP endpoint ${url}: answered 307, a redirect, which is not followed`);
      expect(inside.requests).toEqual([]);
    });

    it('connects to the address the name resolved to when checked, sending the name as Host', async () => {
      const target = await receiver();
      const asked: string[] = [];
      const resolve: Resolve = async (name) => (asked.push(name), ['127.0.0.1']);
      const url = `http://receiver.example.com:${portOf(target.url)}/batch/`;
      const destination = new HttpDestination(config(url), guardFor([portOf(target.url)], resolve));
      await destination.write(exportPart([eventRecord(1)]));
      await destination.close();
      expect(target.requests.map((request) => request.host)).toEqual([`receiver.example.com:${portOf(target.url)}`]);
      expect(asked).toEqual(['receiver.example.com']);
    });

    it('refuses, for good, a name that resolves inside when it connects, though it resolved outside before (DNS rebinding)', async () => {
      const target = await receiver();
      const answers = [['93.184.216.34'], ['127.0.0.1']];
      const guard = guardFor([], async () => answers.shift() ?? ['127.0.0.1']);
      const url = `http://rebinding.example.com:${portOf(target.url)}/batch/`;
      expect(await guard.check('rebinding.example.com', portOf(target.url))).toEqual({ name: 'rebinding.example.com', addresses: ['93.184.216.34'] });
      const failure = await new HttpDestination(config(url), guard).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(NonRetryableExportError);
      expect((failure as Error).message).toBe(`HTTP endpoint ${url}: refused: rebinding.example.com resolves to 127.0.0.1, which is loopback, not a public address`);
      expect(target.requests).toEqual([]);
    });

    it("refuses the stack's own ClickHouse even where the allow list covers its port", async () => {
      const clickhouse = new URL(testConfig().clickhouseUrl);
      const url = `http://127.0.0.1:${clickhouse.port}/?query=SELECT+1`;
      const failure = await new HttpDestination(config(url), guardFor([Number(clickhouse.port)], async () => [])).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(NonRetryableExportError);
      expect((failure as Error).message).toBe(`HTTP endpoint http://127.0.0.1:${clickhouse.port}/: refused: 127.0.0.1:${clickhouse.port} is this installation's ClickHouse (HTTP)`);
    });
  });
});
