/**
 * The windows a batch export runs over: `[start, end)` by the time rows were stored, one interval
 * long, aligned to the interval (hours and days on UTC boundaries, weeks from Monday) so that a
 * schedule and a backfill cut the same windows.
 */
export const EXPORT_INTERVALS = ['hour', 'day', 'week', 'every 5 minutes'] as const;
export type ExportInterval = (typeof EXPORT_INTERVALS)[number];

const MINUTE_MS = 60_000;
const DURATION_MS: Record<ExportInterval, number> = { 'every 5 minutes': 5 * MINUTE_MS, hour: 60 * MINUTE_MS, day: 1_440 * MINUTE_MS, week: 10_080 * MINUTE_MS };
// 1970-01-05 was the first Monday after the epoch.
const WEEK_OFFSET_MS = 4 * 1_440 * MINUTE_MS;

export interface ExportWindow {
  start: Date;
  end: Date;
}

export const intervalMs = (interval: ExportInterval): number => DURATION_MS[interval];

/** The start of the window holding `at`. */
export function windowStart(at: Date, interval: ExportInterval): Date {
  const size = DURATION_MS[interval];
  const offset = interval === 'week' ? WEEK_OFFSET_MS : 0;
  return new Date(Math.floor((at.getTime() - offset) / size) * size + offset);
}

/**
 * The windows from `from` (a window start) whose end has passed `settleMs` ago, that end at or
 * before `endAt` when the export has one, at most `limit` of them, oldest first.
 */
export function dueWindows(from: Date, interval: ExportInterval, now: Date, settleMs: number, endAt: Date | null, limit: number): ExportWindow[] {
  const size = DURATION_MS[interval];
  const windows: ExportWindow[] = [];
  for (let start = from.getTime(); windows.length < limit; start += size) {
    const end = start + size;
    if (end + settleMs > now.getTime() || (endAt && end > endAt.getTime())) break;
    windows.push({ start: new Date(start), end: new Date(end) });
  }
  return windows;
}

/** Every window of a backfill: those covering `[start, end)`, cut as the schedule cuts them. */
export function backfillWindows(start: Date, end: Date, interval: ExportInterval): ExportWindow[] {
  const size = DURATION_MS[interval];
  const windows: ExportWindow[] = [];
  for (let at = windowStart(start, interval).getTime(); at < end.getTime(); at += size) windows.push({ start: new Date(at), end: new Date(at + size) });
  return windows;
}
