import { loadHogQLParser, printQuery } from '@tributary/hogql';
import { buildRetentionQuery, retentionPlan, shapeRetention, type RetentionQueryRequest } from './retention-query.js';
import { InsightCalendar } from '../toolkit/insight-calendar.js';

const cal = new InsightCalendar('UTC');
beforeAll(() => loadHogQLParser());

const now = new Date('2024-01-10T12:00:00Z');
const request = (filter: RetentionQueryRequest['retentionFilter'] = {}, dateTo: string | null = null): RetentionQueryRequest => ({
  kind: 'RetentionQuery',
  retentionFilter: { targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' }, ...filter },
  ...(dateTo && { dateRange: { date_to: dateTo } }),
});

describe('RetentionQuery', () => {
  it('has totalIntervals cohorts (8 by default) ending with the interval of date_to', () => {
    const plan = retentionPlan(request(), now, cal);
    expect(plan).toMatchObject({ total: 8, interval: 'day', firstTime: false, start: new Date('2024-01-03T00:00:00Z'), end: new Date('2024-01-11T00:00:00Z') });
    const weeks = retentionPlan(request({ period: 'Week', totalIntervals: 2 }, '2024-01-10'), now, cal);
    expect(weeks).toMatchObject({ start: new Date('2024-01-01T00:00:00Z'), end: new Date('2024-01-15T00:00:00Z') });
  });

  it('reads first events from all time for first-time retention, and guards the project', () => {
    const plan = retentionPlan(request({ retentionType: 'retention_first_time', totalIntervals: 3 }), now, cal);
    const sql = printQuery(buildRetentionQuery(plan, request(), { now, cohorts: new Map() }, cal), { teamId: 42 }).clickhouse;
    expect(sql).toContain('minIf(');
    expect(sql).toContain('`events`.team_id = 42');
    expect(sql).toContain('`d`.team_id = 42');
  });

  it("one row per cohort, with one value fewer each, labelled as PostHog's", () => {
    const plan = retentionPlan(request({ totalIntervals: 3 }, '2024-01-03'), now, cal);
    const results = shapeRetention([[0, 0, 5], [0, 2, 1], [1, 0, 2]], plan, cal);
    expect(results).toEqual([
      { date: '2024-01-01T00:00:00Z', label: 'Day 0', values: [{ count: 5, label: 'Day 0' }, { count: 0, label: 'Day 1' }, { count: 1, label: 'Day 2' }] },
      { date: '2024-01-02T00:00:00Z', label: 'Day 1', values: [{ count: 2, label: 'Day 0' }, { count: 0, label: 'Day 1' }] },
      { date: '2024-01-03T00:00:00Z', label: 'Day 2', values: [{ count: 0, label: 'Day 0' }] },
    ]);
  });

  it('refuses an unknown period or retention type', () => {
    expect(() => retentionPlan(request({ period: 'Hour' as never }), now, cal)).toThrow(/period must be one of/);
    expect(() => retentionPlan(request({ retentionType: 'retention' as never }), now, cal)).toThrow(/retentionType/);
    expect(() => retentionPlan(request({ totalIntervals: 0 }), now, cal)).toThrow(/totalIntervals/);
  });
});
