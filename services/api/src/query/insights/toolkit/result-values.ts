import type { InsightCalendar, TrendsInterval } from './insight-calendar.js';

/** A numeric result as a number: NULL and NaN (an average of nothing) are 0, as PostHog charts them. */
export const asNumber = (value: unknown): number => {
  const n = typeof value === 'number' ? value : value === null || value === undefined ? 0 : Number(value);
  return Number.isFinite(n) ? n : 0;
};

/** One value per bucket of the period, 0 where no row was returned; rows outside the period are dropped. */
export function zeroFill(rows: readonly { bucket: unknown; value: unknown }[], buckets: readonly Date[], interval: TrendsInterval, cal: InsightCalendar): number[] {
  const byDay = new Map<string, number>();
  for (const row of rows) byDay.set(String(row.bucket), asNumber(row.value));
  return buckets.map((b) => byDay.get(cal.formatDay(b, interval)) ?? 0);
}
