import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parquetReadObjects } from 'hyparquet';
import { freePort, testConfig, uniqueName } from '@tributary/test-support';
import { ExportError, NonRetryableExportError } from './export-error.js';
import { S3Destination, type S3DestinationConfig } from './s3-destination.js';
import { eventRecord, exportPart, localGuard } from './test-parts.js';

/** Against S3Proxy, started by infra/s3proxy/s3proxy.sh (`make up`); each test in a bucket of its own. */
const config = testConfig();
const s3 = new S3Client({
  region: 'us-east-1',
  endpoint: config.s3Endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
const destinations: S3Destination[] = [];
afterAll(async () => {
  await Promise.all(destinations.map((d) => d.close()));
  s3.destroy();
});

async function newBucket(): Promise<string> {
  const bucket = uniqueName('exports').replaceAll('_', '-');
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

function destination(bucket: string, overrides: Partial<S3DestinationConfig> = {}): S3Destination {
  const created = new S3Destination({
    bucket_name: bucket,
    region: 'us-east-1',
    prefix: 'posthog-events/',
    aws_access_key_id: config.s3AccessKeyId,
    aws_secret_access_key: config.s3SecretAccessKey,
    endpoint_url: config.s3Endpoint,
    compression: null,
    file_format: 'JSONLines',
    max_file_size_mb: null,
    use_virtual_style_addressing: false,
    encryption: null,
    kms_key_id: null,
    include_events: null,
    exclude_events: null,
    ...overrides,
  }, localGuard);
  destinations.push(created);
  return created;
}

async function objects(bucket: string): Promise<{ key: string; body: Buffer }[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
      return { key: Key!, body: Buffer.from(await object.Body!.transformToByteArray()) };
    }),
  );
}

const jsonLines = (body: Buffer) => body.toString('utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
const INTERVAL = '2024-03-05T06:00:00+00:00-2024-03-05T07:00:00+00:00';

describe('S3 destination', () => {
  it("writes a part as gzipped JSON lines under PostHog's key for its window", async () => {
    const bucket = await newBucket();
    const records = Array.from({ length: 20 }, (_, i) => eventRecord(i));
    const result = await destination(bucket, { compression: 'gzip' }).write(exportPart(records, 2));
    const stored = await objects(bucket);
    expect(stored.map((o) => o.key)).toEqual([`posthog-events/${INTERVAL}-2-0.jsonl.gz`]);
    const rows = jsonLines(gunzipSync(stored[0]!.body));
    expect(rows.map((row) => row.uuid)).toEqual(records.map((r) => r.uuid));
    expect(rows[4]).toEqual({
      uuid: records[4]!.uuid,
      event: '$pageview',
      properties: records[4]!.properties,
      distinct_id: 'user-4',
      timestamp: records[4]!.timestamp,
      created_at: '2024-03-05T06:00:01.000Z',
      elements_chain: 'a:href="/x"nth-child="1"',
      person_id: records[4]!.person_id,
      person_properties: { email: 'u4@example.com' },
      _inserted_at: '2024-03-05T06:30:00.000Z',
    });
    expect(result).toEqual({ records: 20, bytes: stored[0]!.body.length });
  });

  it('compresses with brotli', async () => {
    const bucket = await newBucket();
    const records = Array.from({ length: 20 }, (_, i) => eventRecord(i));
    await destination(bucket, { compression: 'brotli' }).write(exportPart(records));
    const [object] = await objects(bucket);
    expect(object!.key).toBe(`posthog-events/${INTERVAL}-0-0.jsonl.br`);
    expect(jsonLines(brotliDecompressSync(object!.body)).map((row) => row.uuid)).toEqual(records.map((r) => r.uuid));
  });

  it('writes Parquet files that read back to the exported values', async () => {
    const bucket = await newBucket();
    const records = Array.from({ length: 50 }, (_, i) => eventRecord(i));
    await destination(bucket, { file_format: 'Parquet', compression: 'gzip' }).write(exportPart(records));
    const [object] = await objects(bucket);
    expect(object!.key).toBe(`posthog-events/${INTERVAL}-0-0.parquet.gz`);
    const body = object!.body;
    const rows = await parquetReadObjects({
      file: body.buffer.slice(body.byteOffset, body.byteOffset + body.length) as ArrayBuffer,
      compressors: { GZIP: (input) => new Uint8Array(gunzipSync(input)) },
    });
    expect(rows.map((row) => ({ ...row, properties: JSON.parse(row.properties as string) as unknown, person_properties: JSON.parse(row.person_properties as string) as unknown }))).toEqual(
      records.map((r) => ({
        uuid: r.uuid,
        event: r.event,
        properties: r.properties,
        distinct_id: r.distinct_id,
        timestamp: new Date(r.timestamp as string),
        created_at: new Date(r.created_at as string),
        elements_chain: r.elements_chain,
        person_id: r.person_id,
        person_properties: r.person_properties,
        _inserted_at: new Date(r.inserted_at as string),
      })),
    );
  });

  it("renders PostHog's prefix template variables from the window", async () => {
    const bucket = await newBucket();
    await destination(bucket, { prefix: '{table}/{year}/{month}/{day}/{hour}/{data_interval_start}' }).write(exportPart([eventRecord(1)]));
    expect((await objects(bucket)).map((o) => o.key)).toEqual([`events/2024/03/05/07/2024-03-05T06:00:00+00:00/${INTERVAL}-0-0.jsonl`]);
  });

  it('splits a part larger than max_file_size_mb into numbered objects under the limit', async () => {
    const bucket = await newBucket();
    const records = Array.from({ length: 3000 }, (_, i) => eventRecord(i, {}, 1000));
    const result = await destination(bucket, { max_file_size_mb: 1 }).write(exportPart(records, 1));
    const stored = (await objects(bucket)).sort((a, b) => Number(/-(\d+)\.jsonl$/.exec(a.key)![1]) - Number(/-(\d+)\.jsonl$/.exec(b.key)![1]));
    expect(stored.length).toBeGreaterThanOrEqual(4);
    expect(stored.map((o) => o.key)).toEqual(stored.map((_, file) => `posthog-events/${INTERVAL}-1-${file}.jsonl`));
    for (const { body } of stored) expect(body.length).toBeLessThanOrEqual(1024 * 1024);
    expect(stored.flatMap((o) => jsonLines(o.body)).map((row) => row.uuid)).toEqual(records.map((r) => r.uuid));
    expect(result.bytes).toBe(stored.reduce((sum, o) => sum + o.body.length, 0));
  });

  it('overwrites a part written again: the same keys, the same objects, no copies', async () => {
    const bucket = await newBucket();
    const target = destination(bucket, { max_file_size_mb: 1, compression: 'gzip' });
    const parts = [0, 1].map((index) => exportPart(Array.from({ length: 1500 }, (_, i) => eventRecord(index * 1500 + i, {}, 2000)), index));
    for (const part of parts) await target.write(part);
    const first = await objects(bucket);
    // A resumed run writes the part it stopped in again, from a new destination.
    await destination(bucket, { max_file_size_mb: 1, compression: 'gzip' }).write({ ...parts[1]!, runId: 'another-attempt' });
    const second = await objects(bucket);
    expect(first.length).toBeGreaterThan(2);
    expect(second.map((o) => o.key).sort()).toEqual(first.map((o) => o.key).sort());
    expect(second.flatMap((o) => jsonLines(gunzipSync(o.body))).length).toBe(3000);
    expect(new Set(second.flatMap((o) => jsonLines(gunzipSync(o.body)).map((row) => row.uuid))).size).toBe(3000);
  });

  it('writes only the included events, without the excluded ones', async () => {
    const bucket = await newBucket();
    const records = Array.from({ length: 9 }, (_, i) => eventRecord(i));
    const result = await destination(bucket, { include_events: ['$pageview', 'signed_up'], exclude_events: ['signed_up'] }).write(exportPart(records));
    const [object] = await objects(bucket);
    expect(jsonLines(object!.body).map((row) => row.event)).toEqual(Array(6).fill('$pageview'));
    expect(result.records).toBe(6);
  });

  it('fails for good, naming the bucket, when the bucket is missing or the credentials are wrong', async () => {
    const part = exportPart([eventRecord(1)]);
    const missing = destination('no-such-bucket-here').write(part);
    await expect(missing).rejects.toThrow(NonRetryableExportError);
    await expect(missing).rejects.toThrow(/S3 bucket "no-such-bucket-here" at http:\/\/.*NoSuchBucket \(status 404\)/);
    const bucket = await newBucket();
    const refused = destination(bucket, { aws_secret_access_key: 'not-the-secret' }).write(part);
    await expect(refused).rejects.toThrow(NonRetryableExportError);
    await expect(refused).rejects.toThrow(/status 403/);
    expect(await objects(bucket)).toEqual([]);
  });

  it('fails so the run retries when the server cannot be reached', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const failure = await destination('exports', { endpoint_url: endpoint }).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExportError);
    expect(failure).not.toBeInstanceOf(NonRetryableExportError);
    expect((failure as Error).message).toMatch(new RegExp(`^S3 bucket "exports" at ${endpoint}: .*ECONNREFUSED`));
  });

  it('writes nothing for a part whose events are all filtered out', async () => {
    const bucket = await newBucket();
    expect(await destination(bucket, { include_events: ['never'] }).write(exportPart([eventRecord(1)]))).toEqual({ records: 0, bytes: 0 });
    expect(await objects(bucket)).toEqual([]);
  });
});
