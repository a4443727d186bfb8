import { InsightCalendar } from './insight-calendar.js';
import { zeroFill } from './result-values.js';

const now = new Date('2024-03-15T10:30:00Z');
const utc = new InsightCalendar('UTC');
const newYork = new InsightCalendar('America/New_York');
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe('date ranges and buckets in UTC', () => {
  it('-7d by day is the seven days before today and today: eight buckets, the last one ending tonight', () => {
    const period = utc.resolveDateRange(undefined, 'day', now);
    expect(period.from.toISOString()).toBe('2024-03-08T00:00:00.000Z');
    expect(period.to.toISOString()).toBe('2024-03-16T00:00:00.000Z');
    expect(period.buckets.map((b) => utc.formatDay(b, 'day'))).toEqual(['2024-03-08', '2024-03-09', '2024-03-10', '2024-03-11', '2024-03-12', '2024-03-13', '2024-03-14', '2024-03-15']);
  });

  it('an absolute date_to includes its whole day', () => {
    const period = utc.resolveDateRange({ date_from: '2024-01-01', date_to: '2024-01-03' }, 'day', now);
    expect(period.from.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(period.to.toISOString()).toBe('2024-01-04T00:00:00.000Z');
    expect(period.buckets.map((b) => utc.formatLabel(b, 'day'))).toEqual(['1-Jan-2024', '2-Jan-2024', '3-Jan-2024']);
  });

  it('mStart and yStart start the month and the year; all starts at the earliest event', () => {
    expect(utc.resolveDateRange({ date_from: 'mStart' }, 'day', now).from.toISOString()).toBe('2024-03-01T00:00:00.000Z');
    expect(utc.resolveDateRange({ date_from: 'yStart' }, 'month', now).buckets.map((b) => utc.formatDay(b, 'month'))).toEqual(['2024-01-01', '2024-02-01', '2024-03-01']);
    expect(utc.resolveDateRange({ date_from: 'all' }, 'day', now, new Date('2024-03-13T17:00:00Z')).buckets).toHaveLength(3);
  });

  it('buckets weeks from Monday and hours by the hour, labelled as PostHog labels them', () => {
    const weeks = utc.bucketsOf(new Date('2024-01-03T00:00:00Z'), new Date('2024-01-16T00:00:00Z'), 'week');
    expect(iso(weeks)).toEqual(['2024-01-01T00:00:00.000Z', '2024-01-08T00:00:00.000Z', '2024-01-15T00:00:00.000Z']);
    const hours = utc.resolveDateRange({ date_from: '-2h' }, 'hour', now);
    expect(hours.buckets.map((b) => utc.formatDay(b, 'hour'))).toEqual(['2024-03-15 08:00:00', '2024-03-15 09:00:00', '2024-03-15 10:00:00']);
    expect(utc.formatLabel(hours.buckets[0]!, 'hour')).toBe('15-Mar-2024 08:00');
  });

  it('the previous period has as many buckets and ends where the current one starts', () => {
    const current = utc.resolveDateRange({ date_from: '2024-01-08', date_to: '2024-01-14' }, 'day', now);
    const previous = utc.previousPeriod(current, 'day');
    expect(previous.buckets.map((b) => utc.formatDay(b, 'day'))).toEqual(['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06', '2024-01-07']);
    expect(previous.to).toEqual(current.from);
  });

  it('refuses a date it cannot read, naming the field', () => {
    expect(() => utc.resolveDateRange({ date_from: 'last tuesday' }, 'day', now)).toThrow(/dateRange.date_from/);
    expect(() => utc.resolveDateRange({ date_from: '2024-02-01', date_to: '2024-01-01' }, 'day', now)).toThrow(/before/);
  });

  it('writes moments as PostHog does, Z in UTC', () => {
    expect(utc.iso(new Date('2024-01-01T00:00:00Z'))).toBe('2024-01-01T00:00:00Z');
  });
});

describe('date ranges and buckets in a project timezone', () => {
  it('a date is the local day, midnight to midnight', () => {
    const period = newYork.resolveDateRange({ date_from: '2024-01-01', date_to: '2024-01-02' }, 'day', now);
    expect(period.from.toISOString()).toBe('2024-01-01T05:00:00.000Z');
    expect(period.to.toISOString()).toBe('2024-01-03T05:00:00.000Z');
    expect(newYork.iso(period.from)).toBe('2024-01-01T00:00:00-05:00');
  });

  it('days across a daylight-saving change are 23 and 25 hours long, and keep their local dates', () => {
    const spring = newYork.resolveDateRange({ date_from: '2024-03-09', date_to: '2024-03-11' }, 'day', now);
    expect(iso(spring.buckets)).toEqual(['2024-03-09T05:00:00.000Z', '2024-03-10T05:00:00.000Z', '2024-03-11T04:00:00.000Z']);
    expect(spring.buckets.map((b) => newYork.formatDay(b, 'day'))).toEqual(['2024-03-09', '2024-03-10', '2024-03-11']);
  });

  it('-7d counts back local days from the local today; a time without an offset is local', () => {
    const late = new Date('2024-03-16T02:00:00Z'); // 22:00 on the 15th in New York
    expect(newYork.formatDay(newYork.resolveDateRange(undefined, 'day', late).buckets.at(-1)!, 'day')).toBe('2024-03-15');
    expect(newYork.parseDate('2024-01-01T12:00:00', now, 'x').date.toISOString()).toBe('2024-01-01T17:00:00.000Z');
    expect(newYork.parseDate('2024-01-01T12:00:00Z', now, 'x').date.toISOString()).toBe('2024-01-01T12:00:00.000Z');
  });

  it('weeks start on the local Monday, months on the local first', () => {
    expect(newYork.bucketStart(new Date('2024-01-08T03:00:00Z'), 'week').toISOString()).toBe('2024-01-01T05:00:00.000Z');
    expect(newYork.bucketStart(new Date('2024-02-01T03:00:00Z'), 'month').toISOString()).toBe('2024-01-01T05:00:00.000Z');
  });

  it('buckets in ClickHouse with the same zone', async () => {
    const { loadHogQLParser, printHogQL } = await import('@tributary/hogql');
    await loadHogQLParser();
    const select = { node: 'SelectQuery' as const, select: [newYork.bucketOf({ node: 'Field', chain: ['timestamp'] }, 'week')], select_from: { node: 'JoinExpr' as const, table: { node: 'Field' as const, chain: ['events'] } } };
    expect(printHogQL(select)).toBe("SELECT toMonday(timestamp, 'America/New_York') FROM events");
  });
});

describe('zero fill', () => {
  it('gives every bucket a value, 0 where ClickHouse returned no row; rows outside the period are dropped', () => {
    const { buckets } = newYork.resolveDateRange({ date_from: '2024-01-01', date_to: '2024-01-04' }, 'day', now);
    expect(zeroFill([{ bucket: '2024-01-02', value: 3 }, { bucket: '2024-01-04', value: 1 }, { bucket: '2023-12-31', value: 9 }], buckets, 'day', newYork)).toEqual([0, 3, 0, 1]);
    expect(zeroFill([{ bucket: '2024-01-01', value: null }], buckets, 'day', newYork)).toEqual([0, 0, 0, 0]);
  });
});
