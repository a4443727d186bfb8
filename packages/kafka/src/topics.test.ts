import { messageKey, topicNames } from './topics.js';

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
