import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { ResultsTable } from '../components/results-table.js';
import { useCancellableQuery } from '../use-cancellable-query.js';
import { BREAKDOWNS, overviewTiles, statsRow, type OverviewItem } from '../web-analytics-view.js';

const RANGES = [
  { value: '-1d', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-14d', label: 'Last 14 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-90d', label: 'Last 90 days' },
];

/** Visitors, views, sessions, duration and bounce rate against the period before, and a table by the breakdown chosen. */
export function WebAnalyticsPage() {
  const [range, setRange] = useState('-7d');
  const [compare, setCompare] = useState(true);
  const [breakdown, setBreakdown] = useState('Page');
  const overview = useCancellableQuery<{ results: OverviewItem[] }>();
  const stats = useCancellableQuery<{ columns: string[]; results: unknown[][] }>();
  const common = { dateRange: { date_from: range, date_to: null }, compareFilter: { compare } };

  useEffect(() => {
    void overview.run({ kind: 'WebOverviewQuery', ...common });
  }, [range, compare]);
  useEffect(() => {
    void stats.run({ kind: 'WebStatsTableQuery', breakdownBy: breakdown, limit: 25, ...common });
  }, [range, compare, breakdown]);

  const label = BREAKDOWNS.find((b) => b.value === breakdown)?.label ?? breakdown;
  return (
    <section>
      <div class="page-head">
        <h1>Web analytics</h1>
      </div>
      <form class="builder" onSubmit={(e) => e.preventDefault()}>
        <label class="field">
          Date range
          <select id="web-range" value={range} onChange={(e) => setRange((e.target as HTMLSelectElement).value)}>
            {RANGES.map((r) => (
              <option value={r.value}>{r.label}</option>
            ))}
          </select>
        </label>
        <label class="inline">
          <input id="web-compare" type="checkbox" checked={compare} onChange={(e) => setCompare((e.target as HTMLInputElement).checked)} /> Compare with the period before
        </label>
      </form>
      <ErrorMessage error={overview.error} />
      {overview.running && !overview.data && <p aria-busy="true">Loading…</p>}
      {overview.data && (
        <ul class="web-tiles" aria-label="Overview">
          {overviewTiles(overview.data.results).map((tile) => (
            <li class="tile">
              <h2>{tile.label}</h2>
              <p class="figure">{tile.value}</p>
              {tile.change !== null && (
                <p class={tile.good === null ? 'muted' : tile.good ? 'change-good' : 'change-bad'}>
                  {tile.change} <span class="muted">from {tile.previous}</span>
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
      <h2>By {label.toLowerCase()}</h2>
      <label class="field">
        Breakdown
        <select id="web-breakdown" value={breakdown} onChange={(e) => setBreakdown((e.target as HTMLSelectElement).value)}>
          {BREAKDOWNS.map((b) => (
            <option value={b.value}>{b.label}</option>
          ))}
        </select>
      </label>
      <ErrorMessage error={stats.error} />
      {stats.running && !stats.data && <p aria-busy="true">Loading…</p>}
      {stats.data && (stats.data.results.length === 0 ? <p class="empty">No pageviews with a session in this range.</p> : <ResultsTable caption={`Visitors by ${label.toLowerCase()}`} columns={[label, 'Visitors', 'Views', 'Bounce rate']} rows={stats.data.results.map(statsRow)} />)}
    </section>
  );
}
