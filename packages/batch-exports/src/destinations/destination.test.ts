import { Ajv } from 'ajv';
import { DESTINATION_CONFIG_SCHEMAS, NonRetryableExportError, createDestination } from './destination.js';
import { HttpDestination } from './http-destination.js';
import { PostgresDestination } from './postgres-destination.js';
import { S3Destination } from './s3-destination.js';
import { localGuard } from './test-parts.js';

/** As the API validates a request's destination config: defaults filled in, every problem named. */
function validate(type: keyof typeof DESTINATION_CONFIG_SCHEMAS, config: Record<string, unknown>) {
  const check = new Ajv({ useDefaults: true, allErrors: true }).compile(DESTINATION_CONFIG_SCHEMAS[type]);
  const copy = structuredClone(config);
  return check(copy) ? { config: copy } : { errors: (check.errors ?? []).map((e) => `${e.instancePath || e.params.missingProperty || e.params.additionalProperty}`) };
}

describe('destination config schemas', () => {
  it("fill in PostHog's defaults for S3", () => {
    expect(validate('S3', { bucket_name: 'exports', region: 'us-east-1' })).toEqual({
      config: {
        bucket_name: 'exports',
        region: 'us-east-1',
        prefix: '',
        aws_access_key_id: null,
        aws_secret_access_key: null,
        endpoint_url: null,
        compression: null,
        file_format: 'JSONLines',
        max_file_size_mb: null,
        use_virtual_style_addressing: false,
        encryption: null,
        kms_key_id: null,
        include_events: null,
        exclude_events: null,
      },
    });
  });

  it("fill in PostHog's defaults for Postgres and HTTP", () => {
    expect(validate('Postgres', { user: 'u', password: '', host: 'db', database: 'warehouse' }).config).toMatchObject({ port: 5432, schema: 'public', table_name: 'events', has_self_signed_cert: false });
    expect(validate('HTTP', { url: 'https://eu.i.posthog.com/batch/', token: 'phc_x' }).config).toEqual({ url: 'https://eu.i.posthog.com/batch/', token: 'phc_x', include_events: null, exclude_events: null });
  });

  it('name each field that is missing, unknown or invalid', () => {
    expect(validate('S3', { region: 'us-east-1', compression: 'zip', prefix: '{week}', buckett: 'x' }).errors).toEqual(expect.arrayContaining(['bucket_name', 'buckett', '/compression', '/prefix']));
    expect(validate('S3', { bucket_name: 'b', region: 'r', file_format: 'CSV', max_file_size_mb: 0 }).errors).toEqual(expect.arrayContaining(['/file_format', '/max_file_size_mb']));
    expect(validate('Postgres', { user: 'u', password: 'p', host: 'h', database: 'd', port: 70000 }).errors).toEqual(['/port']);
    expect(validate('HTTP', { url: 'ftp://x', token: 't', include_events: 'signed_up' }).errors).toEqual(expect.arrayContaining(['/url', '/include_events']));
  });

  it('accept both compressions for both formats, and none', () => {
    for (const compression of ['gzip', 'brotli', null]) {
      for (const file_format of ['JSONLines', 'Parquet']) expect(validate('S3', { bucket_name: 'b', region: 'r', compression, file_format }).config).toBeDefined();
    }
  });
});

describe('createDestination', () => {
  it('builds the destination of each type', async () => {
    const destinations = [
      createDestination({ type: 'S3', config: { bucket_name: 'b', region: 'us-east-1' } as never }, localGuard),
      createDestination({ type: 'Postgres', config: { user: 'u', password: 'p', host: 'h', database: 'd' } as never }, localGuard),
      createDestination({ type: 'HTTP', config: { url: 'http://127.0.0.1:1/batch/', token: 't' } as never }, localGuard),
    ];
    expect(destinations.map((d) => d.constructor)).toEqual([S3Destination, PostgresDestination, HttpDestination]);
    await Promise.all(destinations.map((d) => d.close()));
  });

  it('refuses a stored config that no longer validates, as a failure no retry can fix', () => {
    const build = () => createDestination({ type: 'S3', config: { region: 'us-east-1' } as never }, localGuard);
    expect(build).toThrow(NonRetryableExportError);
    expect(build).toThrow(/S3 destination: invalid config: config must have required property 'bucket_name'/);
  });
});
