import { eventRecord } from './window-reader.js';

const stored = (overrides: Partial<Parameters<typeof eventRecord>[0]> = {}): Parameters<typeof eventRecord>[0] => ({
  uuid_text: '018e1a2b-0000-7000-8000-000000000001',
  event: '$pageview',
  properties: '{"$current_url":"https://example.com/","n":1}',
  distinct_id: 'user-1',
  team_id: '7',
  timestamp_text: '2024-03-05 06:10:00',
  timestamp_ms: 123,
  created_at_text: '2024-03-05 06:10:01',
  elements_chain: '',
  person_id_text: '018e1a2b-0000-7000-8000-00000000beef',
  person_properties: '{"email":"u1@example.com"}',
  inserted_at_text: '2024-03-05 06:20:00',
  ...overrides,
});

describe('eventRecord', () => {
  it('passes JSON columns on as the text ClickHouse holds, unparsed', () => {
    const record = eventRecord(stored());
    expect(record.properties).toBe('{"$current_url":"https://example.com/","n":1}');
    expect(record.person_properties).toBe('{"email":"u1@example.com"}');
    expect(record).toMatchObject({ team_id: 7, timestamp: '2024-03-05T06:10:00.123Z', created_at: '2024-03-05T06:10:01.000Z', inserted_at: '2024-03-05T06:20:00.000Z' });
  });

  it('gives {} for a JSON column that holds no object', () => {
    for (const text of ['', 'null', '[1]', '{"cut'])
      expect(eventRecord(stored({ properties: text, person_properties: text }))).toMatchObject({ properties: '{}', person_properties: '{}' });
  });
});
