import { parseFlagDate } from '@tributary/flags';

/**
 * A point in time from an ISO 8601 string or PostHog's relative form (`-7d`, `-24h`, `-2w`,
 * `-1m` for months, `-1y`, also without the minus sign); `null` when it is neither. Stricter
 * than flag dates, which also take epoch numbers and anything `Date` parses.
 */
export function parseDateInput(value: string, now: Date): Date | null {
  const trimmed = value.trim();
  if (!/^-?\d+[hdwmy]$/.test(trimmed) && !/^\d{4}-\d{2}-\d{2}/.test(trimmed)) return null;
  return parseFlagDate(trimmed, now);
}
