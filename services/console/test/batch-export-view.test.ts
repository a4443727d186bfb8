import { backfillRange, createBody, destinationSummary, draftErrors, initialFields, isHttpUrl, progressText, windowText, type ExportDraft } from '../src/batch-export-view.js';

const draft = (type: ExportDraft['type'], fields: Record<string, string>, name = 'Export'): ExportDraft => ({ name, interval: 'hour', model: 'events', type, fields: { ...initialFields(type), ...fields } });

describe("a batch export's form is checked before the API is called", () => {
  it('names each required field that is empty', () => {
    expect(draftErrors(draft('S3', { region: '' }, ' '))).toEqual({ name: 'Name is required.', bucket_name: 'Bucket is required.', region: 'Region is required.' });
    expect(draftErrors(draft('Postgres', {}))).toEqual({ host: 'Host is required.', database: 'Database is required.', user: 'User is required.' });
    expect(draftErrors(draft('HTTP', {}))).toEqual({ url: 'URL is required.', token: 'Project token is required.' });
  });

  it('asks for an http(s) URL and a port from 1 to 65535', () => {
    expect(draftErrors(draft('HTTP', { url: 'ftp://example.com', token: 't' }))).toEqual({ url: 'URL must be an http:// or https:// URL.' });
    expect(draftErrors(draft('HTTP', { url: 'https://example.com/batch/', token: 't' }))).toEqual({});
    expect(draftErrors(draft('S3', { bucket_name: 'b', endpoint_url: 'not a url' }))).toEqual({ endpoint_url: 'Endpoint URL must be an http:// or https:// URL.' });
    for (const port of ['0', '65536', '54.3', 'x']) {
      expect(draftErrors(draft('Postgres', { host: 'db.example.com', database: 'd', user: 'u', port }))).toEqual({ port: 'Port must be a whole number from 1 to 65535.' });
    }
    expect(draftErrors(draft('Postgres', { host: 'db.example.com', database: 'd', user: 'u', port: '65535' }))).toEqual({});
    expect([isHttpUrl('http://'), isHttpUrl('https://a.test/x y'), isHttpUrl('http://127.0.0.1:8123')]).toEqual([false, false, true]);
  });

  it("asks for S3's key and secret together, or neither", () => {
    expect(draftErrors(draft('S3', { bucket_name: 'b', aws_access_key_id: 'id' }))).toEqual({ aws_secret_access_key: 'Give both the access key id and the secret, or neither.' });
    expect(draftErrors(draft('S3', { bucket_name: 'b', aws_access_key_id: 'id', aws_secret_access_key: 's' }))).toEqual({});
  });

  it("sends PostHog's config, leaving empty optional fields to the API's defaults and the port a number", () => {
    expect(createBody(draft('Postgres', { host: ' db ', database: 'd', user: 'u', password: 'p' }))).toEqual({
      name: 'Export',
      interval: 'hour',
      model: 'events',
      destination: { type: 'Postgres', config: { host: 'db', port: 5432, database: 'd', user: 'u', password: 'p', schema: 'public', table_name: 'events' } },
    });
    expect(createBody(draft('S3', { bucket_name: 'b' })).destination.config).toEqual({ bucket_name: 'b', region: 'us-east-1', file_format: 'JSONLines' });
  });

  it('sends secrets as typed, spaces at their ends kept, while other fields are trimmed', () => {
    expect(createBody(draft('Postgres', { host: ' db ', database: 'd', user: 'u', password: ' p ' })).destination.config).toMatchObject({ host: 'db', password: ' p ' });
  });

  it('sends an empty Postgres password, which the API requires and reads as none (a server that asks for none)', () => {
    expect(createBody(draft('Postgres', { host: 'db', database: 'd', user: 'u', password: '' })).destination.config).toMatchObject({ user: 'u', password: '' });
  });
});

describe('what the page shows', () => {
  it("a backfill's progress: windows done of all, and records", () => {
    const backfill = { id: 'b', start_at: '', end_at: '', status: 'Running' };
    expect(progressText({ ...backfill, progress: { total_runs: 24, finished_runs: 6, progress: 0.25 }, total_records_count: 100, records_completed: 40 })).toBe('6 of 24 windows (25%), 40 of 100 records');
    expect(progressText({ ...backfill, progress: { total_runs: 0, finished_runs: 0, progress: null }, total_records_count: null, records_completed: 0 })).toBe('no windows yet, 0 records');
  });

  it('a backfill of whole past UTC days, the last one over', () => {
    const now = new Date('2026-11-29T09:00:00Z');
    expect(backfillRange('2026-11-01', '2026-11-02', now)).toEqual({ body: { start_at: '2026-11-01T00:00:00Z', end_at: '2026-11-03T00:00:00Z' } });
    expect(backfillRange('2026-11-28', '2026-11-28', now).body).toEqual({ start_at: '2026-11-28T00:00:00Z', end_at: '2026-11-29T00:00:00Z' });
    expect(backfillRange('2026-11-29', '2026-11-29', now).error).toMatch(/before today/);
    expect(backfillRange('2026-11-03', '2026-11-02', now).error).toMatch(/not be after/);
    expect(backfillRange('', '2026-11-02', now).error).toMatch(/Choose/);
  });

  it('a destination without its secrets, and a run by its window', () => {
    expect(destinationSummary({ type: 'S3', config: { bucket_name: 'b', prefix: 'events/' } })).toBe('s3://b/events/');
    expect(destinationSummary({ type: 'Postgres', config: { host: 'h', port: 5432, database: 'd', schema: 'public', table_name: 'events' } })).toBe('h:5432/d public.events');
    expect(windowText({ data_interval_start: '2026-11-01T00:00:00.000Z', data_interval_end: '2026-11-01T01:00:00.000Z' })).toBe('2026-11-01 00:00 – 01:00');
    expect(windowText({ data_interval_start: '2026-11-01T00:00:00.000Z', data_interval_end: '2026-11-02T00:00:00.000Z' })).toBe('2026-11-01 00:00 – 2026-11-02 00:00');
  });
});
