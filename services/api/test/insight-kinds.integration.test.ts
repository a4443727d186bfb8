import { randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, createTestTenant, eventRow, replicasHold, type TestTenant } from '@tributary/test-support';
import { useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;

const day = (d: number) => `2024-01-0${d} 12:00:00`;
const row = (teamId: number, distinctId: string, d: number) => eventRow(teamId, distinctId, '$pageview', day(d), {}, { person_created_at: day(1) });

const query = (body: object) => api.request('POST', `/api/environments/${tenant.project.id}/query/`, tenant.personalApiKey, { query: body });
const range = { date_from: '2024-01-01', date_to: '2024-01-03' };
const series = [{ kind: 'EventsNode', event: '$pageview' }];

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  const other = await createTestTenant(api.pool, api.config);
  // ann on days 1, 2 and 3; bob on day 1 only; the other project's carol every day.
  const rows = [row(tenant.project.id, 'ann', 1), row(tenant.project.id, 'ann', 2), row(tenant.project.id, 'ann', 3), row(tenant.project.id, 'bob', 1)];
  for (const d of [1, 2, 3]) rows.push(row(other.project.id, 'carol', d));
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, rows);
  const people = [['ann', randomUUID()], ['bob', randomUUID()]] as const;
  await api.clickhouse.insert('person', PERSON_COLUMNS, people.map(([, id]) => ({ id, created_at: day(1), team_id: tenant.project.id, properties: '{}', is_identified: 1, is_deleted: 0, version: 1 })));
  await api.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, people.map(([distinct_id, person_id]) => ({ team_id: tenant.project.id, distinct_id, person_id, is_deleted: 0, version: 1 })));
  await replicasHold(api.clickhouse, api.config, [tenant.project.id]);
});

describe('the insight kinds on POST .../query/', () => {
  it('StickinessQuery counts persons by how many days they were active', async () => {
    const { status, body } = await query({ kind: 'StickinessQuery', series, interval: 'day', dateRange: range });
    expect(status).toBe(200);
    expect(body.results[0]).toMatchObject({ data: [1, 0, 1], days: [1, 2, 3], count: 2 });
  });

  it('LifecycleQuery splits persons into new, returning, resurrecting and dormant', async () => {
    const { status, body } = await query({ kind: 'LifecycleQuery', series, interval: 'day', dateRange: range });
    expect(status).toBe(200);
    const byStatus = Object.fromEntries(body.results.map((r: { status: string; data: number[] }) => [r.status, r.data]));
    expect(byStatus).toEqual({ new: [2, 0, 0], returning: [0, 1, 1], resurrecting: [0, 0, 0], dormant: [0, -1, 0] });
  });

  it('RetentionQuery gives each cohort the persons who came back', async () => {
    const { status, body } = await query({ kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 3, retentionType: 'retention_recurring' }, dateRange: range });
    expect(status).toBe(200);
    expect(body.results.map((r: { values: { count: number }[] }) => r.values.map((v) => v.count))).toEqual([[2, 1, 1], [1, 1], [1]]);
  });

  it('FunnelsQuery counts the persons reaching each step, with their conversion times', async () => {
    const { status, body } = await query({ kind: 'FunnelsQuery', series: [...series, ...series], dateRange: range, funnelsFilter: { funnelWindowInterval: 2, funnelWindowIntervalUnit: 'day' } });
    expect(status).toBe(200);
    // Only ann comes back (a day later); the other project's carol, every day, is not counted.
    expect(body.results.map((step: { count: number }) => step.count)).toEqual([2, 1]);
    expect(body.results[1]).toMatchObject({ order: 1, average_conversion_time: 86_400, median_conversion_time: 86_400 });
  });

  it('refuses a request its kind does not take with a 400 naming the field', async () => {
    const { status, body } = await query({ kind: 'RetentionQuery', retentionFilter: { period: 'Fortnight' } });
    expect(status).toBe(400);
    expect(body.attr).toBe('query.retentionFilter.period');
    expect((await query({ kind: 'LifecycleQuery', series, interval: 'hour' })).status).toBe(400);
    const oneStep = await query({ kind: 'FunnelsQuery', series });
    expect(oneStep.status).toBe(400);
    expect(oneStep.body.attr).toBe('query.series');
  });
});
