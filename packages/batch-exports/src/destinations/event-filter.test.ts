import { encodedEventFilter, eventFilter } from './event-filter.js';

const events = ['$pageview', '$autocapture', 'signed_up'].map((event) => ({ event }));
const kept = (filter: (record: Record<string, unknown>) => boolean) => events.filter(filter).map((r) => r.event);

describe('eventFilter', () => {
  it('keeps every event when neither list is set or both are empty', () => {
    expect(kept(eventFilter('events', { include_events: null, exclude_events: null }))).toEqual(['$pageview', '$autocapture', 'signed_up']);
    expect(kept(eventFilter('events', { include_events: [], exclude_events: [] }))).toEqual(['$pageview', '$autocapture', 'signed_up']);
  });

  it('keeps only the included events', () => {
    expect(kept(eventFilter('events', { include_events: ['signed_up', 'never_sent'], exclude_events: null }))).toEqual(['signed_up']);
  });

  it('drops the excluded events, also when they are included', () => {
    expect(kept(eventFilter('events', { include_events: null, exclude_events: ['$autocapture'] }))).toEqual(['$pageview', 'signed_up']);
    expect(kept(eventFilter('events', { include_events: ['$pageview', 'signed_up'], exclude_events: ['signed_up'] }))).toEqual(['$pageview']);
  });

  it('never filters persons, which have no event name', () => {
    const persons = [{ distinct_id: 'a' }, { distinct_id: 'b' }];
    expect(persons.filter(eventFilter('persons', { include_events: ['$pageview'], exclude_events: null }))).toEqual(persons);
  });
});

describe('encodedEventFilter', () => {
  const encoded = ['$pageview', 'signed "up"', 'tab\there'].map((event) => ({ event: Buffer.from(JSON.stringify(event)), line: Buffer.from('{}\n') }));
  const names = (filter: ReturnType<typeof encodedEventFilter>) => encoded.filter(filter).map((e) => JSON.parse(e.event.toString()) as string);

  it('compares names as the JSON literals ClickHouse gives them, escapes included', () => {
    expect(names(encodedEventFilter({ include_events: null, exclude_events: null }))).toEqual(['$pageview', 'signed "up"', 'tab\there']);
    expect(names(encodedEventFilter({ include_events: ['signed "up"', 'tab\there'], exclude_events: ['tab\there'] }))).toEqual(['signed "up"']);
    expect(names(encodedEventFilter({ include_events: [], exclude_events: ['$pageview'] }))).toEqual(['signed "up"', 'tab\there']);
  });
});
