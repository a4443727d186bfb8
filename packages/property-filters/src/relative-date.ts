const UNITS: Record<string, (date: Date, n: number) => void> = {
  h: (d, n) => d.setUTCHours(d.getUTCHours() - n),
  d: (d, n) => d.setUTCDate(d.getUTCDate() - n),
  w: (d, n) => d.setUTCDate(d.getUTCDate() - 7 * n),
  m: (d, n) => d.setUTCMonth(d.getUTCMonth() - n),
  y: (d, n) => d.setUTCFullYear(d.getUTCFullYear() - n),
};

/**
 * A date the stores can hold, else null: years 1 to 9999, as ISO 8601 writes them. JavaScript
 * goes on to year 275760 either way (`-99999999d`, say), where Postgres refuses the value outright.
 */
function held(date: Date): Date | null {
  const year = date.getUTCFullYear();
  return Number.isNaN(date.getTime()) || year < 1 || year > 9999 ? null : date;
}

/** An ISO date or a relative one (`-7d`, `-1h`, `-2w`, `-1m`, `-1y`), or null. */
export function parseFlagDate(value: unknown, now: Date): Date | null {
  if (value instanceof Date) return held(value);
  if (typeof value === 'number') return held(new Date(value > 1e11 ? value : value * 1000));
  if (typeof value !== 'string') return null;
  const relative = /^-?(\d+)([hdwmy])$/.exec(value.trim());
  if (relative) {
    const date = new Date(now.getTime());
    UNITS[relative[2]!]!(date, Number(relative[1]));
    return held(date);
  }
  return held(new Date(value));
}

/**
 * A point in time from an ISO 8601 string or PostHog's relative form (`-7d`, `-24h`, `-2w`,
 * `-1m` for months, `-1y`, also without the minus sign); `null` when it is neither. Stricter
 * than flag dates, which also take epoch numbers and anything `Date` parses: this is what a
 * filter's date value and the events API's `after`/`before` must be.
 */
export function parseDateInput(value: string, now: Date): Date | null {
  const trimmed = value.trim();
  if (!/^-?\d+[hdwmy]$/.test(trimmed) && !/^\d{4}-\d{2}-\d{2}/.test(trimmed)) return null;
  return parseFlagDate(trimmed, now);
}
