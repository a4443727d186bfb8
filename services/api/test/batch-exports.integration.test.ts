import { createKey, createTestTenant, testConfig, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const path = (suffix = '', project = tenant.project.id) => `/api/environments/${project}/batch_exports/${suffix}`;
const call = (method: string, suffix: string, body?: unknown, key = tenant.personalApiKey) => api.request(method, path(suffix), key, body);
// The stack's S3Proxy, which the api's allow list lets exports reach, as `make up`'s does.
const s3Proxy = new URL(testConfig().s3Endpoint);
const s3 = {
  type: 'S3',
  config: { bucket_name: 'exports', region: 'us-east-1', prefix: 'events/{year}/{month}/{day}', aws_access_key_id: 'id', aws_secret_access_key: 'secret', endpoint_url: s3Proxy.origin, compression: 'gzip', file_format: 'JSONLines' },
};
const create = (extra: object = {}) => call('POST', '', { name: 'To S3', destination: s3, interval: 'hour', ...extra });

const setup = useApi({ batchExportAllowedDestinations: [s3Proxy.host, '127.0.0.1:5432'] });
beforeAll(() => {
  ({ api, tenant } = setup);
});

describe('batch exports', () => {
  it("creates one with PostHog's shape, never answering its secrets", async () => {
    const { status, body } = await create();
    expect(status).toBe(201);
    expect(body).toMatchObject({ id: expect.any(String), team_id: tenant.project.id, name: 'To S3', model: 'events', interval: 'hour', paused: false, latest_runs: [] });
    expect(body.destination.type).toBe('S3');
    expect(body.destination.config).toMatchObject({ bucket_name: 'exports', prefix: 'events/{year}/{month}/{day}', compression: 'gzip' });
    expect(body.destination.config).not.toHaveProperty('aws_secret_access_key');
    expect(body.destination.config).not.toHaveProperty('aws_access_key_id');
    const stored = await api.pool.query('SELECT destination_config FROM batch_exports WHERE id = $1', [body.id]);
    expect(stored.rows[0].destination_config.aws_secret_access_key).toBe('secret');

    const list = await call('GET', '');
    expect(list.body.results.map((e: { id: string }) => e.id)).toContain(body.id);
    expect((await call('GET', `${body.id}/`)).body).toMatchObject({ id: body.id, name: 'To S3' });
  });

  it('updates the name and merges a destination config, keeping the secrets not sent again', async () => {
    const { body } = await create();
    const patched = await call('PATCH', `${body.id}/`, { name: 'Renamed', destination: { type: 'S3', config: { prefix: 'other' } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Renamed', destination: { config: { prefix: 'other', bucket_name: 'exports' } } });
    const stored = await api.pool.query('SELECT destination_config FROM batch_exports WHERE id = $1', [body.id]);
    expect(stored.rows[0].destination_config).toMatchObject({ prefix: 'other', aws_secret_access_key: 'secret' });
  });

  it('pauses and unpauses', async () => {
    const { body } = await create();
    expect((await call('POST', `${body.id}/pause/`)).body).toMatchObject({ paused: true, last_paused_at: expect.any(String) });
    expect((await call('POST', `${body.id}/unpause/`)).body).toMatchObject({ paused: false });
  });

  it('backfills a range as one run per window, listed newest first, with its progress; cancelling stops those not finished', async () => {
    const { body } = await create({ paused: true });
    const backfill = await call('POST', `${body.id}/backfills/`, { start_at: '2024-01-01T00:30:00Z', end_at: '2024-01-01T03:00:00Z' });
    expect(backfill.status).toBe(201);
    expect(backfill.body).toMatchObject({ batch_export: body.id, status: 'Running', start_at: '2024-01-01T00:30:00.000Z' });
    expect(backfill.body).toMatchObject({ progress: { total_runs: 3, finished_runs: 0, progress: 0 }, records_completed: 0, total_records_count: null });

    const runs = await call('GET', `${body.id}/runs/`);
    expect(runs.body.count).toBe(3);
    expect(runs.body.results.map((r: { data_interval_start: string }) => r.data_interval_start)).toEqual(['2024-01-01T02:00:00.000Z', '2024-01-01T01:00:00.000Z', '2024-01-01T00:00:00.000Z']);
    expect(runs.body.results[0]).toMatchObject({ status: 'Starting', records_completed: 0, backfill: backfill.body.id, batch_export: body.id });
    const run = runs.body.results[0];
    expect((await call('GET', `${body.id}/runs/${run.id}/`)).body).toMatchObject({ id: run.id });
    // Only a finished run may be retried.
    expect((await call('POST', `${body.id}/runs/${run.id}/retry/`)).status).toBe(400);

    // One window exported, one being run: the progress counts windows done of all, and their records.
    const [, middle, oldest] = runs.body.results as { id: string }[];
    await api.pool.query("UPDATE batch_export_runs SET status = 'Completed', records_completed = 40, records_total_count = 40 WHERE id = $1", [oldest!.id]);
    await api.pool.query("UPDATE batch_export_runs SET status = 'Running', records_completed = 5, records_total_count = 60 WHERE id = $1", [middle!.id]);
    expect((await call('GET', `${body.id}/backfills/${backfill.body.id}/`)).body).toMatchObject({
      progress: { total_runs: 3, finished_runs: 1, progress: 1 / 3 },
      records_completed: 45,
      total_records_count: 100,
    });

    const cancelled = await call('POST', `${body.id}/backfills/${backfill.body.id}/cancel/`);
    expect(cancelled.body.status).toBe('Cancelled');
    // The run being run is cancelled too: its worker stops after the part it is writing.
    expect((await call('GET', `${body.id}/runs/${middle!.id}/`)).body.status).toBe('Cancelled');
    expect((await call('GET', `${body.id}/runs/${oldest!.id}/`)).body.status).toBe('Completed');
    const after = await call('GET', `${body.id}/runs/`);
    expect(after.body.results.filter((r: { status: string }) => r.status === 'Cancelled')).toHaveLength(2);
    expect((await call('POST', `${body.id}/runs/${run.id}/retry/`)).body.status).toBe('Starting');
    expect((await call('GET', `${body.id}/backfills/`)).body.results.map((b: { id: string }) => b.id)).toEqual([backfill.body.id]);
  });

  it('refuses what it cannot run, naming the field', async () => {
    const { body } = await create();
    const cases: [string, string, object, string][] = [
      ['POST', '', { destination: s3, interval: 'hour' }, 'name'],
      ['POST', '', { name: 'x', destination: s3, interval: 'fortnightly' }, 'interval'],
      ['POST', '', { name: 'x', destination: { type: 'FTP', config: {} }, interval: 'hour' }, 'destination.type'],
      ['POST', '', { name: 'x', destination: { type: 'S3', config: {} }, interval: 'hour' }, 'destination.config.bucket_name'],
      ['POST', '', { name: 'x', destination: s3, interval: 'hour', start_at: 'soon' }, 'start_at'],
      ['POST', `${body.id}/backfills/`, { start_at: '2024-01-02T00:00:00Z', end_at: '2024-01-01T00:00:00Z' }, 'end_at'],
      ['POST', `${body.id}/backfills/`, { start_at: '2024-01-01T00:00:00Z', end_at: '2999-01-01T00:00:00Z' }, 'end_at'],
    ];
    for (const [method, suffix, request, attr] of cases) {
      const response = await call(method, suffix, request);
      expect([response.status, response.body.attr]).toEqual([400, attr]);
    }
    expect((await call('GET', 'not-a-uuid/')).status).toBe(404);
  });

  it('deletes one: gone from the list and the routes', async () => {
    const { body } = await create();
    expect((await call('DELETE', `${body.id}/`)).status).toBe(204);
    expect((await call('GET', `${body.id}/`)).status).toBe(404);
    expect((await call('GET', '')).body.results.map((e: { id: string }) => e.id)).not.toContain(body.id);
  });

  it("needs batch_export scopes, and never reaches another project's exports", async () => {
    const { body } = await create();
    const reader = await createKey(api.pool, api.config, tenant.user.id, ['batch_export:read']);
    expect((await call('GET', '', undefined, reader)).status).toBe(200);
    expect((await call('POST', '', { name: 'x', destination: s3, interval: 'hour' }, reader)).status).toBe(403);
    const stranger = await createTestTenant(api.pool, api.config);
    expect((await api.request('GET', path(`${body.id}/`, stranger.project.id), stranger.personalApiKey)).status).toBe(404);
    expect((await api.request('GET', path('', stranger.project.id), stranger.personalApiKey)).body.count).toBe(0);
  });

  describe("refuses a destination that is not someone else's server, naming the field and why", () => {
    const http = (url: string) => ({ type: 'HTTP', config: { url, token: 'phc_x' } });
    const refused = async (destination: object) => {
      const { status, body } = await call('POST', '', { name: 'x', destination, interval: 'hour' });
      return { status, attr: body.attr, code: body.code, detail: body.detail as string };
    };

    it.each([
      ['http://127.0.0.1:8123/?query=SELECT%201', "127.0.0.1:8123 is this installation's ClickHouse (HTTP)"],
      ['http://localhost:8123/', /^localhost resolves to (127\.0\.0\.1|::1); (127\.0\.0\.1|\[::1\]):8123 is this installation's ClickHouse \(HTTP\)$/],
      ['http://localhost:18080/', /^localhost resolves to (127\.0\.0\.1|::1), which is loopback, not a public address$/],
      ['http://[::1]:18080/', '::1 is loopback, not a public address'],
      ['http://[::ffff:127.0.0.1]:18080/', '::ffff:7f00:1 is loopback (IPv4 127.0.0.1 inside IPv6), not a public address'],
      ['http://2130706433:18080/', '127.0.0.1 is loopback, not a public address'],
      ['http://0x7f000001:18080/', '127.0.0.1 is loopback, not a public address'],
      ['http://0177.0.0.1:18080/', '127.0.0.1 is loopback, not a public address'],
      ['http://127.1:18080/', '127.0.0.1 is loopback, not a public address'],
      ['http://127.0.0.1.:18080/', '127.0.0.1 is loopback, not a public address'],
      ['http://10.0.0.1/batch/', '10.0.0.1 is private, not a public address'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata service'],
      ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a cloud metadata service'],
    ])('an HTTP url of %s', async (url, reason) => {
      const answer = await refused(http(url));
      expect(answer).toMatchObject({ status: 400, attr: 'destination.config.url', code: 'destination_not_allowed' });
      const why = /^destination\.config\.url is refused: (.*)\.$/.exec(answer.detail)?.[1];
      if (typeof reason === 'string') expect(why).toBe(reason);
      else expect(why).toMatch(reason);
    });

    it("an S3 endpoint_url or a Postgres host that is the stack's own store, or a private address", async () => {
      expect(await refused({ ...s3, config: { ...s3.config, endpoint_url: 'http://127.0.0.1:9000' } })).toMatchObject({
        status: 400,
        attr: 'destination.config.endpoint_url',
        detail: "destination.config.endpoint_url is refused: 127.0.0.1:9000 is this installation's ClickHouse (native protocol).",
      });
      const postgres = (config: object) => ({ type: 'Postgres', config: { user: 'u', password: 'p', host: '127.0.0.1', database: 'warehouse', ...config } });
      expect(await refused(postgres({ port: 6379 }))).toMatchObject({ status: 400, attr: 'destination.config.host', detail: "destination.config.host is refused: 127.0.0.1:6379 is this installation's Redis." });
      expect(await refused(postgres({ database: 'tributary' }))).toMatchObject({ status: 400, attr: 'destination.config.host', detail: "destination.config.host is refused: 127.0.0.1:5432 is this installation's Postgres database." });
      expect(await refused(postgres({ host: '/var/run/postgresql' }))).toMatchObject({ status: 400, attr: 'destination.config.host' });
      expect(await refused(postgres({ host: '192.168.0.10' }))).toMatchObject({ status: 400, detail: 'destination.config.host is refused: 192.168.0.10 is private, not a public address.' });
      expect((await call('POST', '', { name: 'x', destination: postgres({}), interval: 'hour' })).status).toBe(201);
    });

    it('an update that points an export at ClickHouse, leaving it as it was', async () => {
      const { body } = await create();
      const patched = await call('PATCH', `${body.id}/`, { destination: { type: 'S3', config: { endpoint_url: 'http://[::1]:8123' } } });
      expect([patched.status, patched.body.attr, patched.body.detail]).toEqual([400, 'destination.config.endpoint_url', "destination.config.endpoint_url is refused: [::1]:8123 is this installation's ClickHouse (HTTP)."]);
      const stored = await api.pool.query('SELECT destination_config FROM batch_exports WHERE id = $1', [body.id]);
      expect(stored.rows[0].destination_config.endpoint_url).toBe(s3Proxy.origin);
    });
  });
});
