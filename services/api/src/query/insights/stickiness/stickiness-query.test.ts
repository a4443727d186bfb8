import { loadHogQLParser, printQuery } from '@tributary/hogql';
import { buildStickinessQuery, shapeStickiness, stickinessPeriod, type StickinessQueryRequest } from './stickiness-query.js';
import { InsightCalendar } from '../toolkit/insight-calendar.js';

const cal = new InsightCalendar('UTC');
beforeAll(() => loadHogQLParser());

const now = new Date('2024-01-10T12:00:00Z');
const request = (extra: Partial<StickinessQueryRequest> = {}): StickinessQueryRequest => ({
  kind: 'StickinessQuery',
  series: [{ kind: 'EventsNode', event: '$pageview' }],
  dateRange: { date_from: '2024-01-01', date_to: '2024-01-03' },
  ...extra,
});

describe('StickinessQuery', () => {
  it('counts the intervals of the range: three days are days 1 to 3', () => {
    const { period, interval } = stickinessPeriod(request(), now, cal);
    expect(interval).toBe('day');
    expect(period.buckets).toHaveLength(3);
  });

  it('counts each person\'s distinct active intervals, then persons per count, for the project alone', () => {
    const { period, interval } = stickinessPeriod(request(), now, cal);
    const sql = printQuery(buildStickinessQuery(request().series[0]!, request(), period, interval, { now, cohorts: new Map() }, cal), { teamId: 42 }).clickhouse;
    expect(sql).toContain("uniqExact(toDate(`events`.`timestamp`, 'UTC'))");
    expect(sql).toContain('`events`.team_id = 42');
    expect(sql).toContain("'$pageview'");
    expect(sql).toMatch(/GROUP BY `num_intervals`/);
  });

  it("data[i] is the persons active on exactly i+1 intervals, zero where none, labelled as PostHog's", () => {
    const result = shapeStickiness([[1, 2], [3, 1]], { id: '$pageview', type: 'events', name: '$pageview' }, 0, 4, 'day');
    expect(result).toEqual({
      action: { order: 0, type: 'events', name: '$pageview', id: '$pageview' },
      label: '$pageview',
      count: 3,
      data: [2, 0, 1, 0],
      labels: ['1 day', '2 days', '3 days', '4 days'],
      days: [1, 2, 3, 4],
    });
    expect(shapeStickiness([], { id: null, type: 'events', name: 'All events' }, 1, 2, 'week')).toMatchObject({ label: 'All events', labels: ['1 week', '2 weeks'], data: [0, 0], count: 0 });
  });

  it('refuses an interval it does not know', () => {
    expect(() => stickinessPeriod(request({ interval: 'fortnight' as never }), now, cal)).toThrow(/interval must be one of/);
  });
});
