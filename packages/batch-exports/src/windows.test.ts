import { backfillWindows, dueWindows, windowStart } from './windows.js';

const at = (iso: string) => new Date(iso);
const iso = (windows: { start: Date; end: Date }[]) => windows.map((w) => [w.start.toISOString(), w.end.toISOString()]);

describe('export windows', () => {
  it('align hours and days to UTC, weeks to Monday, five minutes to the clock', () => {
    expect(windowStart(at('2024-01-03T10:42:00Z'), 'hour').toISOString()).toBe('2024-01-03T10:00:00.000Z');
    expect(windowStart(at('2024-01-03T10:42:00Z'), 'day').toISOString()).toBe('2024-01-03T00:00:00.000Z');
    expect(windowStart(at('2024-01-03T10:42:00Z'), 'week').toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(windowStart(at('2024-01-03T10:42:30Z'), 'every 5 minutes').toISOString()).toBe('2024-01-03T10:40:00.000Z');
  });

  it('are due once their end has settled, oldest first, up to a limit and an end', () => {
    const from = at('2024-01-03T08:00:00Z');
    expect(iso(dueWindows(from, 'hour', at('2024-01-03T10:00:30Z'), 60_000, null, 10))).toEqual([['2024-01-03T08:00:00.000Z', '2024-01-03T09:00:00.000Z']]);
    expect(dueWindows(from, 'hour', at('2024-01-03T11:05:00Z'), 60_000, null, 10)).toHaveLength(3);
    expect(dueWindows(from, 'hour', at('2024-01-03T11:05:00Z'), 60_000, null, 2)).toHaveLength(2);
    expect(dueWindows(from, 'hour', at('2024-01-03T11:05:00Z'), 60_000, at('2024-01-03T10:00:00Z'), 10)).toHaveLength(2);
  });

  it('cut a backfill into the schedule windows covering it', () => {
    expect(iso(backfillWindows(at('2024-01-01T00:30:00Z'), at('2024-01-01T02:00:00Z'), 'hour'))).toEqual([
      ['2024-01-01T00:00:00.000Z', '2024-01-01T01:00:00.000Z'],
      ['2024-01-01T01:00:00.000Z', '2024-01-01T02:00:00.000Z'],
    ]);
  });
});
