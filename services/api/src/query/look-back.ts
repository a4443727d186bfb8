const HOUR_MS = 3_600_000;

/**
 * Look-back windows of a newest-first page, in hours (an hour, a day, a week, a month, a year):
 * most pages are served by the last hour alone. ClickHouse reads a window's day whole to find its
 * rows, but sorts only the window's: a day of 900,000 events sorts in 200 ms, its last hour in 40.
 */
const WINDOWS_HOURS = [1, 24, 7 * 24, 30 * 24, 365 * 24];

/**
 * The lower time bounds a newest-first page tries, narrowest first: windows reaching back from
 * `end` (the page's upper bound, or now), then `undefined`, the page's own range. A window that
 * reaches back to `after` or past it is no narrower than that range, so it is left out.
 */
export function lookBackBounds(end: Date, after: Date | undefined): (Date | undefined)[] {
  const bounds: (Date | undefined)[] = [];
  for (const hours of WINDOWS_HOURS) {
    const from = new Date(end.getTime() - hours * HOUR_MS);
    if (after && after >= from) break;
    bounds.push(from);
  }
  return [...bounds, undefined];
}

/**
 * A page of rows newest first (ordered by `timestamp` descending before anything else), read
 * window by window: the first window with more rows than the page takes (`full`) answers, since
 * every row outside it (`timestamp` at or before its bound) comes after every row within it, so
 * the page and its ties are the same as the whole range's. The events table is sorted by
 * (team_id, toDate(timestamp), ...), so ClickHouse skips the other days' granules and a recent
 * page of a large project reads a small part of it instead of sorting all of it (PostHog's
 * events list does the same). `read` reads the page with `timestamp > from`, or its whole range.
 */
export async function readNewestFirst<T>(end: Date, after: Date | undefined, full: (rows: T) => boolean, read: (from: Date | undefined) => Promise<T>): Promise<T> {
  const bounds = lookBackBounds(end, after);
  for (const from of bounds.slice(0, -1)) {
    const rows = await read(from);
    if (full(rows)) return rows;
  }
  return read(undefined);
}
