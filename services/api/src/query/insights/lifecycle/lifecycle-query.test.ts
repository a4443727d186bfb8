import { loadHogQLParser, printQuery } from '@tributary/hogql';
import { buildLifecycleQuery, lifecyclePeriod, shapeLifecycle, type LifecycleQueryRequest } from './lifecycle-query.js';
import { InsightCalendar } from '../toolkit/insight-calendar.js';

const cal = new InsightCalendar('UTC');
beforeAll(() => loadHogQLParser());

const now = new Date('2024-01-10T12:00:00Z');
const request = (extra: Partial<LifecycleQueryRequest> = {}): LifecycleQueryRequest => ({
  kind: 'LifecycleQuery',
  series: [{ kind: 'EventsNode', event: '$pageview' }],
  dateRange: { date_from: '2024-01-01', date_to: '2024-01-03' },
  ...extra,
});

describe('LifecycleQuery', () => {
  it('reads from the interval before the range, so its first interval has a status, and guards every table', () => {
    const { period, interval } = lifecyclePeriod(request(), now, cal);
    const sql = printQuery(buildLifecycleQuery(request().series[0]!, request(), period, interval, { now, cohorts: new Map() }, cal), { teamId: 42 }).clickhouse;
    expect(sql).toContain("'2023-12-31T00:00:00.000Z'");
    expect(sql).toContain("'2024-01-04T00:00:00.000Z'");
    expect(sql).toContain('`events`.team_id = 42');
    expect(sql).toContain('`p`.team_id = 42');
    expect(sql).toContain('`d`.team_id = 42');
  });

  it("looks each person's creation up once, after the events are grouped by person, not on every event", () => {
    const { period, interval } = lifecyclePeriod(request(), now, cal);
    const sql = printQuery(buildLifecycleQuery(request().series[0]!, request(), period, interval, { now, cohorts: new Map() }, cal), { teamId: 42, personsOnEvents: 'person_id_override_properties_joined' }).clickhouse;
    expect(sql).not.toContain('__person_created_at');
    // With persons on events, the events' join is the moved ids alone.
    expect(sql).toContain('AS __moved) AS `events__lazy`');
    expect(sql).toMatch(/GROUP BY `actor`\) AS `a` LEFT JOIN \(SELECT p\.id AS id, .*argMax\(p\.created_at, p\.version\) AS created_at/);
  });

  it("answers the four statuses in PostHog's order, zero-filled, dormant negative", () => {
    const { period, interval } = lifecyclePeriod(request(), now, cal);
    const rows = [
      ['2024-01-01', 'new', 2],
      ['2024-01-02', 'returning', 1],
      ['2024-01-02', 'dormant', 1],
      ['2024-01-03', 'resurrecting', 1],
    ];
    const results = shapeLifecycle(rows, { id: '$pageview', type: 'events', name: '$pageview' }, period, interval, cal);
    expect(results.map((r) => [r.status, r.data, r.count])).toEqual([
      ['new', [2, 0, 0], 2],
      ['returning', [0, 1, 0], 1],
      ['resurrecting', [0, 0, 1], 1],
      ['dormant', [0, -1, 0], -1],
    ]);
    expect(results[0]).toMatchObject({
      label: '$pageview - new',
      days: ['2024-01-01', '2024-01-02', '2024-01-03'],
      labels: ['1-Jan-2024', '2-Jan-2024', '3-Jan-2024'],
      action: { id: '$pageview', name: '$pageview', type: 'events', order: 0, math: 'total' },
    });
  });

  it('takes exactly one series, by day, week or month', () => {
    expect(() => lifecyclePeriod(request({ interval: 'hour' as never }), now, cal)).toThrow(/interval must be one of day, week, month/);
  });
});
