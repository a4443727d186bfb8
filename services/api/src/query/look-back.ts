const DAY_MS = 86_400_000;

/** Look-back windows of a newest-first page, in days: most pages are served by recent days alone. */
const WINDOWS_DAYS = [1, 7, 30, 365];

/**
 * The lower time bounds a newest-first page tries, narrowest first: windows reaching back from
 * `end` (the page's upper bound, or now), then `undefined`, the page's own range. A window that
 * reaches back to `after` or past it is no narrower than that range, so it is left out.
 */
export function lookBackBounds(end: Date, after: Date | undefined): (Date | undefined)[] {
  const bounds: (Date | undefined)[] = [];
  for (const days of WINDOWS_DAYS) {
    const from = new Date(end.getTime() - days * DAY_MS);
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
