import { EVENT_ROW_COLUMNS, eventRow, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const project = () => `/api/projects/${tenant.project.id}/`;
const query = (body: object) => api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: body });
const pageviews = [{ kind: 'EventsNode', event: '$pageview' }];

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  // UTC times: 03:00 on the 2nd is 22:00 on the 1st in New York; 05:00 on the 2nd is its midnight.
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [
    eventRow(tenant.project.id, 'ann', '$pageview', '2024-01-02 03:00:00'),
    eventRow(tenant.project.id, 'ann', '$pageview', '2024-01-02 05:00:00'),
    eventRow(tenant.project.id, 'bob', '$pageview', '2024-01-02 12:00:00'),
  ]);
});

describe('a project timezone', () => {
  it('is UTC until set, and is set with PATCH /api/projects/:id/', async () => {
    expect((await api.request('GET', project(), tenant.personalApiKey)).body.timezone).toBe('UTC');
    const { status, body } = await api.request('PATCH', project(), tenant.personalApiKey, { timezone: 'America/New_York' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: tenant.project.id, timezone: 'America/New_York' });
  });

  it('refuses a name that is no IANA timezone, naming the field', async () => {
    const { status, body } = await api.request('PATCH', project(), tenant.personalApiKey, { timezone: 'Mars/Olympus' });
    expect(status).toBe(400);
    expect(body).toMatchObject({ attr: 'timezone' });
    expect(body.detail).toContain('IANA');
  });

  it('buckets trends by the local day', async () => {
    await api.request('PATCH', project(), tenant.personalApiKey, { timezone: 'America/New_York' });
    const { status, body } = await query({ kind: 'TrendsQuery', series: pageviews, interval: 'day', dateRange: { date_from: '2024-01-01', date_to: '2024-01-02' } });
    expect(status).toBe(200);
    expect(body.results[0]).toMatchObject({ days: ['2024-01-01', '2024-01-02'], data: [1, 2] });
    expect(body.resolved_date_range).toEqual({ date_from: '2024-01-01T00:00:00-05:00', date_to: '2024-01-02T23:59:59-05:00' });
  });

  it('buckets hours and cohorts in it too', async () => {
    await api.request('PATCH', project(), tenant.personalApiKey, { timezone: 'Asia/Kolkata' });
    const hours = await query({ kind: 'TrendsQuery', series: pageviews, interval: 'hour', dateRange: { date_from: '2024-01-02T08:00:00', date_to: '2024-01-02T10:59:59' } });
    // 03:00 UTC is 08:30 in Kolkata: the 08:00 local hour.
    expect(hours.body.results[0]).toMatchObject({ days: ['2024-01-02 08:00:00', '2024-01-02 09:00:00', '2024-01-02 10:00:00'], data: [1, 0, 1] });
    const retention = await query({ kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 2 }, dateRange: { date_to: '2024-01-03' } });
    expect(retention.body.results.map((r: { date: string }) => r.date)).toEqual(['2024-01-02T00:00:00+05:30', '2024-01-03T00:00:00+05:30']);
  });
});
