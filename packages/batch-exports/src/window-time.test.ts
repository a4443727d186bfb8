import { windowTimeOf } from './window-time.js';

describe('windowTimeOf', () => {
  it('selects a scheduled run by the time rows were stored, so late events are not missed', () => {
    expect(windowTimeOf({ backfill_id: null })).toBe('inserted_at');
  });

  it('selects a backfill run by the time events happened, as PostHog backfills do', () => {
    expect(windowTimeOf({ backfill_id: '018e1a2b-0000-7000-8000-000000000001' })).toBe('timestamp');
  });
});
