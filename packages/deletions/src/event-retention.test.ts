import { retentionCondition, retentionCutoff } from './event-retention.js';

describe('event retention', () => {
  it('keeps whole UTC days: the cutoff is the start of the day `days` before today, at any hour', () => {
    expect(retentionCutoff(new Date('2026-11-29T00:00:00Z'), 30).toISOString()).toBe('2026-10-30T00:00:00.000Z');
    expect(retentionCutoff(new Date('2026-11-29T23:59:59Z'), 30).toISOString()).toBe('2026-10-30T00:00:00.000Z');
    expect(retentionCutoff(new Date('2026-03-01T04:00:00Z'), 1).toISOString()).toBe('2026-02-28T00:00:00.000Z');
  });

  it("deletes each project's events before its own cutoff and names no other project", () => {
    const now = new Date('2026-11-29T04:00:00Z');
    expect(retentionCondition([{ id: 7, event_retention_days: 30 }, { id: 9, event_retention_days: 365 }], now).text).toBe(
      "(team_id = 7 AND timestamp < toDateTime('2026-10-30 00:00:00', 'UTC')) OR (team_id = 9 AND timestamp < toDateTime('2025-11-29 00:00:00', 'UTC'))",
    );
  });
});
