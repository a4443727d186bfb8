import { messageKey, topicNames } from './topics.js';
import { decodeCaptureMessage, encodeCaptureMessage, type CaptureMessage } from './capture-message.js';

describe('topics', () => {
  it('names the four event topics under a prefix', () => {
    expect(topicNames('t1_')).toEqual({
      realtime: 't1_events_realtime',
      historical: 't1_events_historical',
      overflow: 't1_events_overflow',
      deadLetter: 't1_events_dead_letter',
    });
  });

  it('keys messages by token and distinct id so one person stays on one partition', () => {
    expect(messageKey('phc_abc', 'user-1')).toBe('phc_abc:user-1');
  });
});

describe('capture message', () => {
  const message: CaptureMessage = {
    uuid: '0190f3c0-0000-7000-8000-000000000001',
    distinct_id: 'user-1',
    ip: '127.0.0.1',
    data: '{"event":"signed up"}',
    now: '2026-01-01T00:00:00.000Z',
    sent_at: null,
    token: 'phc_abc',
    historical_migration: false,
  };

  it('round-trips through its JSON encoding', () => {
    expect(decodeCaptureMessage(Buffer.from(encodeCaptureMessage(message)))).toEqual({ ok: true, message });
  });

  it('reports, rather than throws, a value that is not JSON', () => {
    const result = decodeCaptureMessage(Buffer.from('{nope'));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(/not JSON/);
  });

  it('reports a value missing required fields', () => {
    const result = decodeCaptureMessage(JSON.stringify({ ...message, token: undefined }));
    expect(!result.ok && result.reason).toMatch(/token/);
  });

  it('reports an empty value', () => {
    expect(decodeCaptureMessage(null)).toEqual({ ok: false, reason: 'empty message value' });
  });
});
