import { createKey, createTestTenant, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const path = (suffix = '', project = tenant.project.id) => `/api/environments/${project}/batch_exports/${suffix}`;
const call = (method: string, suffix: string, body?: unknown, key = tenant.personalApiKey) => api.request(method, path(suffix), key, body);
const s3 = {
  type: 'S3',
  config: { bucket_name: 'exports', region: 'us-east-1', prefix: 'events/{year}/{month}/{day}', aws_access_key_id: 'id', aws_secret_access_key: 'secret', endpoint_url: 'http://127.0.0.1:9000', compression: 'gzip', file_format: 'JSONLines' },
};
const create = (extra: object = {}) => call('POST', '', { name: 'To S3', destination: s3, interval: 'hour', ...extra });

const setup = useApi();
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

  it('backfills a range as one run per window, listed newest first; cancelling stops those not started', async () => {
    const { body } = await create({ paused: true });
    const backfill = await call('POST', `${body.id}/backfills/`, { start_at: '2024-01-01T00:30:00Z', end_at: '2024-01-01T03:00:00Z' });
    expect(backfill.status).toBe(201);
    expect(backfill.body).toMatchObject({ batch_export: body.id, status: 'Running', start_at: '2024-01-01T00:30:00.000Z' });

    const runs = await call('GET', `${body.id}/runs/`);
    expect(runs.body.count).toBe(3);
    expect(runs.body.results.map((r: { data_interval_start: string }) => r.data_interval_start)).toEqual(['2024-01-01T02:00:00.000Z', '2024-01-01T01:00:00.000Z', '2024-01-01T00:00:00.000Z']);
    expect(runs.body.results[0]).toMatchObject({ status: 'Starting', records_completed: 0, backfill: backfill.body.id, batch_export: body.id });
    const run = runs.body.results[0];
    expect((await call('GET', `${body.id}/runs/${run.id}/`)).body).toMatchObject({ id: run.id });
    // Only a finished run may be retried.
    expect((await call('POST', `${body.id}/runs/${run.id}/retry/`)).status).toBe(400);

    const cancelled = await call('POST', `${body.id}/backfills/${backfill.body.id}/cancel/`);
    expect(cancelled.body.status).toBe('Cancelled');
    const after = await call('GET', `${body.id}/runs/`);
    expect(after.body.results.every((r: { status: string }) => r.status === 'Cancelled')).toBe(true);
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
});
