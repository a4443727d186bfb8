/**
 * The Web analytics page's figures from PostHog's answers: `WebOverviewQuery`'s items as tiles
 * (value, the period before, the change and whether it is good news) and `WebStatsTableQuery`'s
 * `[current, previous]` pairs as table cells. Pure, so the formatting is tested without a browser.
 */
export interface OverviewItem {
  key: string;
  kind: 'unit' | 'duration_s' | 'percentage';
  value: number | null;
  previous: number | null;
  changeFromPreviousPct: number | null;
  isIncreaseBad?: boolean;
}

export interface Tile {
  label: string;
  value: string;
  previous: string | null;
  /** `+12%`, `-3%`, or null when there is nothing to compare with. */
  change: string | null;
  /** Whether the change is good news (more visitors, a lower bounce rate); null without a change. */
  good: boolean | null;
}

export const BREAKDOWNS: { value: string; label: string }[] = [
  { value: 'Page', label: 'Page' },
  { value: 'InitialPage', label: 'Entry page' },
  { value: 'ExitPage', label: 'Exit page' },
  { value: 'InitialReferringDomain', label: 'Referring domain' },
  { value: 'InitialChannelType', label: 'Channel' },
  { value: 'InitialUTMSource', label: 'UTM source' },
  { value: 'InitialUTMMedium', label: 'UTM medium' },
  { value: 'InitialUTMCampaign', label: 'UTM campaign' },
  { value: 'DeviceType', label: 'Device type' },
  { value: 'Browser', label: 'Browser' },
  { value: 'OS', label: 'OS' },
  { value: 'Country', label: 'Country' },
];

const LABELS: Record<string, string> = { visitors: 'Visitors', views: 'Page views', sessions: 'Sessions', 'session duration': 'Session duration', 'bounce rate': 'Bounce rate' };

/** Seconds as `1m 05s`, `2h 03m`, or `42s`. */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function formatValue(kind: OverviewItem['kind'], value: number | null): string {
  if (value === null) return '–';
  if (kind === 'duration_s') return formatDuration(value);
  if (kind === 'percentage') return `${value.toFixed(1)}%`;
  return value.toLocaleString('en');
}

export function overviewTiles(items: OverviewItem[]): Tile[] {
  return items.map((item) => {
    const change = item.changeFromPreviousPct;
    return {
      label: LABELS[item.key] ?? item.key,
      value: formatValue(item.kind, item.value),
      previous: item.previous === null ? null : formatValue(item.kind, item.previous),
      change: change === null ? null : `${change > 0 ? '+' : ''}${change}%`,
      good: change === null || change === 0 ? null : change > 0 !== Boolean(item.isIncreaseBad),
    };
  });
}

/** A stats table row's cells: the value (`(none)` when empty), visitors, views and bounce rate, each with the period before when compared. */
export function statsRow(row: unknown[]): string[] {
  const [value, ...pairs] = row as [string | null, ...[number | null, number | null][]];
  const cell = (pair: [number | null, number | null] | undefined, format: (n: number) => string) => {
    const [now, before] = pair ?? [null, null];
    const shown = now === null ? '–' : format(now);
    return before === null || before === undefined ? shown : `${shown} (was ${format(before)})`;
  };
  const count = (n: number) => n.toLocaleString('en');
  const rate = (n: number) => `${(n * 100).toFixed(1)}%`;
  return [value === null || value === '' ? '(none)' : String(value), cell(pairs[0], count), cell(pairs[1], count), cell(pairs[2], rate)];
}
