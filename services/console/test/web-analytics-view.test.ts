import { formatDuration, overviewTiles, statsRow } from '../src/web-analytics-view.js';

describe('the Web analytics page shows PostHog\'s answers as a person reads them', () => {
  it('overview items become tiles with the change, coloured by whether it is good news', () => {
    const tiles = overviewTiles([
      { key: 'visitors', kind: 'unit', value: 1234, previous: 1000, changeFromPreviousPct: 23 },
      { key: 'session duration', kind: 'duration_s', value: 125, previous: 130, changeFromPreviousPct: -4 },
      { key: 'bounce rate', kind: 'percentage', value: 28.571, previous: 50, changeFromPreviousPct: -43, isIncreaseBad: true },
      { key: 'sessions', kind: 'unit', value: 7, previous: null, changeFromPreviousPct: null },
    ]);
    expect(tiles).toEqual([
      { label: 'Visitors', value: '1,234', previous: '1,000', change: '+23%', good: true },
      { label: 'Session duration', value: '2m 05s', previous: '2m 10s', change: '-4%', good: false },
      { label: 'Bounce rate', value: '28.6%', previous: '50.0%', change: '-43%', good: true },
      { label: 'Sessions', value: '7', previous: null, change: null, good: null },
    ]);
  });

  it('a period without sessions shows no duration or bounce rate', () => {
    expect(overviewTiles([{ key: 'bounce rate', kind: 'percentage', value: null, previous: null, changeFromPreviousPct: null }])[0]!.value).toBe('–');
  });

  it('durations read in the largest units that fit', () => {
    expect([formatDuration(42.4), formatDuration(65), formatDuration(7380)]).toEqual(['42s', '1m 05s', '2h 03m']);
  });

  it('a stats row shows each figure with the period before, and bounce rate in percent', () => {
    expect(statsRow(['/pricing', [3, 1], [5, 2], [0.5, null]])).toEqual(['/pricing', '3 (was 1)', '5 (was 2)', '50.0%']);
    expect(statsRow(['', [1, null], [1, null], [null, null]])).toEqual(['(none)', '1', '1', '–']);
  });
});
