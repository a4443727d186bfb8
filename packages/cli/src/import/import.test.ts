import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { batchSender, ImportError } from './batch-sender.js';
import { checkpointPathOf, importFile } from './import-file.js';
import { derivedUuid, toImportEvent, type ImportEvent } from './import-record.js';
import { readRecords } from './read-records.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tributary-import-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const line = (i: number) => JSON.stringify({ event: 'viewed', distinct_id: `user-${i % 7}`, properties: { i }, timestamp: '2024-01-02T03:04:05Z', uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` });

describe('an exported event', () => {
  it('keeps its fields and uuid, and needs a name and a distinct id', () => {
    expect(toImportEvent(JSON.parse(line(3)), 0, '')).toEqual({
      ok: true,
      event: { event: 'viewed', distinct_id: 'user-3', properties: { i: 3 }, timestamp: '2024-01-02T03:04:05Z', uuid: '00000000-0000-4000-8000-000000000003' },
    });
    expect(toImportEvent({ distinct_id: 'a' }, 0, '')).toEqual({ ok: false, reason: '`event` must be a non-empty string' });
    expect(toImportEvent({ event: 'x', distinct_id: '' }, 0, '')).toMatchObject({ ok: false });
    expect(toImportEvent({ event: 'x', distinct_id: 'a', timestamp: 'yesterday' }, 0, '')).toMatchObject({ ok: false, reason: '`timestamp` must be an ISO 8601 date' });
    expect(toImportEvent({ event: 'x', distinct_id: 'a', uuid: 'nope' }, 0, '')).toMatchObject({ ok: false });
  });

  it('without a uuid gets one from its content and place, the same on every run', () => {
    const a = toImportEvent({ event: 'x', distinct_id: 7 }, 4, 'text');
    expect(a).toMatchObject({ ok: true, event: { distinct_id: '7', uuid: derivedUuid('text', 4) } });
    expect(derivedUuid('text', 4)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedUuid('text', 5)).not.toBe(derivedUuid('text', 4));
  });
});

describe('reading an export', () => {
  it('streams NDJSON, gzipped or not, numbering records and naming bad lines', async () => {
    const text = `${line(0)}\n\nnot json\n${line(1)}\n`;
    await writeFile(path.join(dir, 'a.ndjson'), text);
    await writeFile(path.join(dir, 'a.ndjson.gz'), gzipSync(text));
    for (const file of ['a.ndjson', 'a.ndjson.gz']) {
      const records = [];
      for await (const r of readRecords(path.join(dir, file), 'ndjson')) records.push(r);
      expect(records.map((r) => [r.index, r.line, r.result.ok])).toEqual([[0, 1, true], [1, 3, false], [2, 4, true]]);
    }
  });

  it('reads CSV with a JSON properties column, other columns becoming properties', async () => {
    await writeFile(path.join(dir, 'a.csv'), 'event,distinct_id,timestamp,properties,plan\nsigned up,u1,2024-01-01T00:00:00Z,"{""a"":1}",pro\n,u2,,,\n');
    const records = [];
    for await (const r of readRecords(path.join(dir, 'a.csv'), 'csv')) records.push(r);
    expect(records[0]!.result).toMatchObject({ ok: true, event: { event: 'signed up', distinct_id: 'u1', properties: { a: 1, plan: 'pro' } } });
    expect(records[1]!.result).toMatchObject({ ok: false });
  });
});

describe('importing a file', () => {
  async function exportOf(count: number): Promise<string> {
    const file = path.join(dir, 'export.ndjson');
    await writeFile(file, Array.from({ length: count }, (_, i) => line(i)).join('\n'));
    return file;
  }

  it('sends every event once, in order, in batches of the given size', async () => {
    const file = await exportOf(25);
    const sent: ImportEvent[][] = [];
    const result = await importFile({ file, format: 'ndjson', project: 1, send: async (b) => void sent.push([...b]), batchSize: 10, resume: false });
    expect(sent.map((b) => b.length)).toEqual([10, 10, 5]);
    expect(sent.flat().map((e) => e.properties.i)).toEqual([...Array(25).keys()]);
    expect(result).toMatchObject({ events: 25, thisRun: 25, invalid: 0, resumedFrom: 0 });
  });

  it('after a crash, resumes from the checkpoint: only the batch in flight is sent again', async () => {
    const file = await exportOf(25);
    const sent: string[] = [];
    let calls = 0;
    const crashing = async (batch: readonly ImportEvent[]) => {
      if (++calls === 3) throw new Error('killed');
      sent.push(...batch.map((e) => e.uuid));
    };
    await expect(importFile({ file, format: 'ndjson', project: 1, send: crashing, batchSize: 10, resume: false })).rejects.toThrow('killed');
    expect(JSON.parse(await readFile(checkpointPathOf(file), 'utf8'))).toMatchObject({ records: 20, events: 20 });
    const resumed = await importFile({ file, format: 'ndjson', project: 1, send: async (b) => void sent.push(...b.map((e) => e.uuid)), batchSize: 10, resume: true });
    expect(resumed).toMatchObject({ events: 25, thisRun: 5, resumedFrom: 20 });
    expect(sent).toHaveLength(25);
    expect(new Set(sent).size).toBe(25);
  });

  it('refuses a checkpoint of another file', async () => {
    const file = await exportOf(5);
    await writeFile(checkpointPathOf(file), JSON.stringify({ file: '/elsewhere', size: 1, project: 1, records: 1, events: 1, invalid: 0 }));
    await expect(importFile({ file, format: 'ndjson', project: 1, send: async () => undefined, batchSize: 10, resume: true })).rejects.toThrow(/another import/);
  });

  it('in a dry run, checks and counts without sending', async () => {
    const file = path.join(dir, 'mixed.ndjson');
    await writeFile(file, `${line(0)}\n{"event":""}\n${line(1)}\n`);
    const invalid: number[] = [];
    const result = await importFile({ file, format: 'ndjson', project: 1, send: null, batchSize: 10, resume: false, onInvalid: (l) => invalid.push(l) });
    expect(result).toMatchObject({ events: 2, invalid: 1 });
    expect(invalid).toEqual([2]);
  });
});

describe('sending a batch', () => {
  const responses = (statuses: number[]) => {
    const calls: { url: string; body: any }[] = [];
    const fake = (async (url: string, init: RequestInit) => {
      calls.push({ url, body: JSON.parse(String(init.body)) });
      const status = statuses.shift() ?? 200;
      return new Response(JSON.stringify(status === 200 ? { status: 1 } : { detail: `answer ${status}` }), { status });
    }) as unknown as typeof fetch;
    return { calls, fake };
  };
  const events = [{ event: 'e', distinct_id: 'd', properties: {}, uuid: derivedUuid('x', 0) }];

  it('posts a historical migration to /batch/ and retries 503 with growing waits', async () => {
    const { calls, fake } = responses([503, 503, 200]);
    const waits: number[] = [];
    await batchSender({ url: 'http://front/', apiKey: 'phc_x', fetch: fake, sleep: async (ms) => void waits.push(ms), initialDelayMs: 100 })(events);
    expect(calls).toHaveLength(3);
    expect(calls[0]).toMatchObject({ url: 'http://front/batch/', body: { api_key: 'phc_x', historical_migration: true, batch: events } });
    expect(waits[0]).toBeGreaterThanOrEqual(50);
    expect(waits[1]).toBeGreaterThanOrEqual(100);
  });

  it('stops at once on a refusal, with capture’s explanation, and after its tries on unavailability', async () => {
    await expect(batchSender({ url: 'http://front', apiKey: 'k', fetch: responses([401]).fake })(events)).rejects.toThrow(new ImportError('capture refused a batch with 401: answer 401'));
    const sleep = async () => undefined;
    await expect(batchSender({ url: 'http://front', apiKey: 'k', fetch: responses([503, 503, 503]).fake, sleep, maxAttempts: 3 })(events)).rejects.toThrow(/gave up on a batch after 3 tries/);
  });
});
