import { createHash } from 'node:crypto';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { encodeFiles, splitByWeight } from './export-files.js';

const event = (i: number) => ({
  uuid: `018e0000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  event: i % 2 ? '$pageview' : 'signed_up',
  properties: { $current_url: `https://example.com/${i}`, n: i, nested: { a: [1, 2] }, token: createHash('sha256').update(String(i)).digest('hex') },
  distinct_id: `user-${i % 7}`,
  team_id: 1,
  timestamp: '2024-03-05T06:10:00.123Z',
  created_at: '2024-03-05T06:10:01.000Z',
  elements_chain: '',
  person_id: '018e0000-0000-7000-8000-000000000001',
  person_properties: { email: `u${i}@example.com` },
  inserted_at: '2024-03-05T06:20:00.000Z',
});
const events = (n: number) => Array.from({ length: n }, (_, i) => event(i));
const readParquet = (file: Buffer) =>
  parquetReadObjects({
    file: file.buffer.slice(file.byteOffset, file.byteOffset + file.length) as ArrayBuffer,
    compressors: { GZIP: (input) => new Uint8Array(gunzipSync(input)), BROTLI: (input) => new Uint8Array(brotliDecompressSync(input)) },
  });
const lines = (file: Buffer) => file.toString('utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

describe('encodeFiles', () => {
  it("writes JSON lines with PostHog's S3 event columns: JSON columns as objects, no team_id", async () => {
    const [file, ...rest] = await encodeFiles(events(2), { model: 'events', fileFormat: 'JSONLines', compression: null, maxFileBytes: null });
    expect(rest).toEqual([]);
    const rows = lines(file!);
    expect(rows[1]).toEqual({
      uuid: event(1).uuid,
      event: '$pageview',
      properties: event(1).properties,
      distinct_id: 'user-1',
      timestamp: '2024-03-05T06:10:00.123Z',
      created_at: '2024-03-05T06:10:01.000Z',
      elements_chain: '',
      person_id: event(1).person_id,
      person_properties: { email: 'u1@example.com' },
      _inserted_at: '2024-03-05T06:20:00.000Z',
    });
  });

  it('copies a JSON column given as JSON text into the line as it is', async () => {
    const text = '{"b":1,"a":{"z":[true,null]},"é":"\\u00e9"}';
    const [file] = await encodeFiles([{ ...event(0), properties: text, person_properties: '{}' }], { model: 'events', fileFormat: 'JSONLines', compression: null, maxFileBytes: null });
    expect(file!.toString('utf8')).toContain(`"properties":${text},"distinct_id"`);
    expect(lines(file!)[0]).toMatchObject({ properties: JSON.parse(text), person_properties: {} });
  });

  it('compresses the whole file with gzip or brotli', async () => {
    const records = events(50);
    const [plain] = await encodeFiles(records, { model: 'events', fileFormat: 'JSONLines', compression: null, maxFileBytes: null });
    const [gz] = await encodeFiles(records, { model: 'events', fileFormat: 'JSONLines', compression: 'gzip', maxFileBytes: null });
    const [br] = await encodeFiles(records, { model: 'events', fileFormat: 'JSONLines', compression: 'brotli', maxFileBytes: null });
    expect(gunzipSync(gz!)).toEqual(plain);
    expect(brotliDecompressSync(br!)).toEqual(plain);
    expect(gz!.length).toBeLessThan(plain!.length / 3);
  });

  it('splits a part larger than the maximum into files under it, in record order, the same way every time', async () => {
    const records = events(400);
    const options = { model: 'events', fileFormat: 'JSONLines', compression: 'gzip', maxFileBytes: 4000 } as const;
    const files = await encodeFiles(records, options);
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) expect(file.length).toBeLessThanOrEqual(4000);
    expect(files.flatMap((file) => lines(gunzipSync(file))).map((row) => row.uuid)).toEqual(records.map((r) => r.uuid));
    expect(await encodeFiles(records, options)).toEqual(files);
  });

  it('never cuts a record, even one larger than the maximum', async () => {
    const files = await encodeFiles(events(3), { model: 'events', fileFormat: 'JSONLines', compression: null, maxFileBytes: 10 });
    expect(files.map((file) => lines(file).length)).toEqual([1, 1, 1]);
  });

  it('writes Parquet that reads back to the same values, compressed inside the file', async () => {
    const records = events(30);
    const [file] = await encodeFiles(records, { model: 'events', fileFormat: 'Parquet', compression: 'brotli', maxFileBytes: null });
    expect(file!.subarray(0, 4).toString()).toBe('PAR1');
    const codecs = parquetMetadata(file!.buffer.slice(file!.byteOffset, file!.byteOffset + file!.length) as ArrayBuffer).row_groups.flatMap((group) => group.columns.map((c) => c.meta_data?.codec));
    expect(new Set(codecs)).toEqual(new Set(['BROTLI']));
    const rows = await readParquet(file!);
    expect(rows).toHaveLength(30);
    expect(rows[7]).toMatchObject({
      uuid: records[7]!.uuid,
      event: '$pageview',
      distinct_id: 'user-0',
      timestamp: new Date('2024-03-05T06:10:00.123Z'),
      _inserted_at: new Date('2024-03-05T06:20:00.000Z'),
    });
    expect(JSON.parse(rows[7]!.properties as string)).toEqual(records[7]!.properties);
  });

  it('writes persons with their versions as Parquet integers', async () => {
    const person = { team_id: 2, distinct_id: 'd1', person_id: 'p1', properties: { plan: 'pro' }, person_version: 3, person_distinct_id_version: '5', created_at: '2024-01-01T00:00:00Z', is_deleted: 0, inserted_at: '2024-03-05T06:20:00Z' };
    const [file] = await encodeFiles([person], { model: 'persons', fileFormat: 'Parquet', compression: null, maxFileBytes: null });
    const [row] = await readParquet(file!);
    expect(row).toMatchObject({ team_id: 2n, distinct_id: 'd1', person_version: 3n, person_distinct_id_version: 5n, is_deleted: false, properties: '{"plan":"pro"}' });
  });

  it('writes no file for a part with no records', async () => {
    expect(await encodeFiles([], { model: 'events', fileFormat: 'Parquet', compression: null, maxFileBytes: null })).toEqual([]);
  });
});

describe('splitByWeight', () => {
  it('cuts into consecutive runs of about equal weight, none empty', () => {
    expect(splitByWeight([1, 1, 1, 1, 1, 1], 3, (x) => x)).toEqual([[1, 1], [1, 1], [1, 1]]);
    expect(splitByWeight([10, 1, 1, 1], 2, (x) => x)).toEqual([[10], [1, 1, 1]]);
    expect(splitByWeight([1, 1, 1, 10], 3, (x) => x)).toEqual([[1, 1], [1], [10]]);
    expect(splitByWeight([5, 5], 4, (x) => x)).toEqual([[5], [5]]);
  });
});
