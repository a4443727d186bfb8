import { queryError, type Expr } from '@tributary/hogql';
import { DateTime } from 'luxon';

/**
 * Dates and buckets of the insight queries in the project's timezone, as PostHog's: a day is local
 * midnight to midnight, weeks start on Monday, `2024-01-01` and times without an offset are local,
 * and `days`/`labels` are local wall-clock dates. ClickHouse buckets with the same zone, and its
 * bucket values are the local dates (or hours) these format, so the two sides meet by text.
 */
export type TrendsInterval = 'hour' | 'day' | 'week' | 'month';

/** A period of the chart: events in [from, to), shown in `buckets` (each one's start). */
export interface Period {
  from: Date;
  to: Date;
  buckets: Date[];
}

/** A chart draws at most this many points: more is a range too long for its interval. */
export const MAX_BUCKETS = 5_000;

const RELATIVE = /^-(\d{1,5})([hdwmy])$/;
const ISO = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/;
const UNITS = { h: 'hours', d: 'days', w: 'weeks', m: 'months', y: 'years' } as const;
const PLURAL = { hour: 'hours', day: 'days', week: 'weeks', month: 'months' } as const;

export class InsightCalendar {
  constructor(readonly timezone: string) {}

  private local(date: Date): DateTime {
    return DateTime.fromJSDate(date, { zone: this.timezone });
  }

  bucketStart(date: Date, interval: TrendsInterval): Date {
    return this.local(date).startOf(interval).toJSDate();
  }

  add(date: Date, interval: TrendsInterval, n: number): Date {
    return this.local(date).plus({ [PLURAL[interval]]: n }).toJSDate();
  }

  /** `-7d`, `mStart`, `yStart`, `dStart` or an ISO date (time): the moment it names; `dateOnly` when it names a whole day. */
  parseDate(value: string, now: Date, attr: string): { date: Date; dateOnly: boolean } {
    const relative = RELATIVE.exec(value);
    if (relative) {
      const unit = relative[2] as keyof typeof UNITS;
      return { date: this.local(now).minus({ [UNITS[unit]]: Number(relative[1]) }).toJSDate(), dateOnly: unit !== 'h' };
    }
    if (value === 'dStart') return { date: this.bucketStart(now, 'day'), dateOnly: true };
    if (value === 'mStart') return { date: this.bucketStart(now, 'month'), dateOnly: true };
    if (value === 'yStart') return { date: this.local(now).startOf('year').toJSDate(), dateOnly: true };
    const iso = ISO.exec(value);
    if (iso) {
      const text = iso[2] ? `${iso[1]}T${iso[2]}${iso[3] ?? ''}` : iso[1]!;
      const parsed = DateTime.fromISO(text, { zone: this.timezone });
      if (parsed.isValid) return { date: parsed.toJSDate(), dateOnly: !iso[2] };
    }
    throw queryError(`${attr} must be a relative date such as -7d, mStart, yStart, all, or an ISO 8601 date: ${JSON.stringify(value)}`);
  }

  /**
   * The chart's period as PostHog reads `dateRange`: from the start of `date_from`'s day (or hour),
   * to the end of `date_to`'s day when it is a date, or to the end of the current bucket by default.
   * `earliest` is the project's first matching event, for `date_from: 'all'`.
   */
  resolveDateRange(dateRange: { date_from?: string | null; date_to?: string | null } | undefined, interval: TrendsInterval, now: Date, earliest?: Date | null): Period {
    const fromText = dateRange?.date_from ?? '-7d';
    const toText = dateRange?.date_to ?? null;
    let to: Date;
    if (toText === null) to = this.add(this.bucketStart(now, interval), interval, 1);
    else {
      const parsed = this.parseDate(toText, now, 'dateRange.date_to');
      to = parsed.dateOnly ? this.add(this.bucketStart(parsed.date, 'day'), 'day', 1) : new Date(parsed.date.getTime() + 1000);
    }
    let from: Date;
    if (fromText === 'all') from = this.bucketStart(earliest ?? now, interval === 'hour' ? 'hour' : 'day');
    else {
      const parsed = this.parseDate(fromText, now, 'dateRange.date_from');
      from = this.bucketStart(parsed.date, interval === 'hour' && !parsed.dateOnly ? 'hour' : 'day');
    }
    if (from >= to) throw queryError('dateRange: date_from must be before date_to');
    return { from, to, buckets: this.bucketsOf(from, to, interval) };
  }

  bucketsOf(from: Date, to: Date, interval: TrendsInterval): Date[] {
    const buckets: Date[] = [];
    for (let b = this.bucketStart(from, interval); b < to; b = this.add(b, interval, 1)) {
      buckets.push(b);
      if (buckets.length > MAX_BUCKETS) throw queryError(`dateRange: more than ${MAX_BUCKETS} ${interval}s; choose a longer interval or a shorter range`);
    }
    return buckets;
  }

  /** The period just before, of as many buckets: what `compareFilter.compare` sets beside the current one. */
  previousPeriod(period: Period, interval: TrendsInterval): Period {
    const from = this.add(period.from, interval, -period.buckets.length);
    return { from, to: period.from, buckets: this.bucketsOf(from, period.from, interval) };
  }

  /** PostHog's `days`: `2024-01-01`, or `2024-01-01 13:00:00` by the hour; also the text of ClickHouse's bucket. */
  formatDay(date: Date, interval: TrendsInterval): string {
    return this.local(date).toFormat(interval === 'hour' ? 'yyyy-MM-dd HH:00:00' : 'yyyy-MM-dd');
  }

  /** PostHog's `labels`: `1-Jan-2024`, or `1-Jan-2024 13:00` by the hour. */
  formatLabel(date: Date, interval: TrendsInterval): string {
    return this.local(date).setLocale('en-US').toFormat(interval === 'hour' ? 'd-MMM-yyyy HH:00' : 'd-MMM-yyyy');
  }

  /** A moment as PostHog writes one in the project's zone: `2024-01-01T00:00:00Z`, `2024-01-01T00:00:00-05:00`. */
  iso(date: Date): string {
    return this.local(date).toISO({ suppressMilliseconds: true })!;
  }

  /** Local year and month of a moment, as ClickHouse's toYear/toMonth with the zone give them. */
  yearMonth(date: Date): { year: number; month: number } {
    const local = this.local(date);
    return { year: local.year, month: local.month };
  }

  /** The ClickHouse bucket of a DateTime: a local Date by day, week (Monday) and month, the local hour by the hour. */
  bucketOf(value: Expr, interval: TrendsInterval): Expr {
    const name = { hour: 'toStartOfHour', day: 'toDate', week: 'toMonday', month: 'toStartOfMonth' }[interval];
    return { node: 'Call', name, args: [value, this.zone()] };
  }

  /** A DateTime's local Date. */
  dateOf(value: Expr): Expr {
    return { node: 'Call', name: 'toDate', args: [value, this.zone()] };
  }

  /** A bucket's local Date as a ClickHouse constant. */
  day(date: Date): Expr {
    return { node: 'Call', name: 'toDate', args: [{ node: 'Constant', value: this.formatDay(date, 'day') }] };
  }

  zone(): Expr {
    return { node: 'Constant', value: this.timezone };
  }
}
