import { encodedEventsWindowStatement, eventRecord, eventsWindowStatement, personsWindowStatement } from './window-reader.js';

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

describe('the window a run reads', () => {
  const window = { teamId: 7, start: new Date('2024-03-01T10:00:00Z'), end: new Date('2024-03-01T11:00:00Z'), cursor: { inserted_at: '2024-03-01 10:30:00', key: 'k' } };

  it('is cut by the time events were stored for a scheduled run, and by the time they happened for a backfill', () => {
    for (const statement of [eventsWindowStatement, encodedEventsWindowStatement]) {
      const scheduled = statement({ ...window, by: 'inserted_at' }).text;
      expect(scheduled).toContain("inserted_at >= toDateTime('2024-03-01 10:00:00', 'UTC') AND inserted_at < toDateTime('2024-03-01 11:00:00', 'UTC')");
      expect(scheduled).toMatch(/ORDER BY inserted_at, uuid_text/);
      const backfill = statement({ ...window, by: 'timestamp' }).text;
      expect(backfill).toContain("timestamp >= toDateTime('2024-03-01 10:00:00', 'UTC') AND timestamp < toDateTime('2024-03-01 11:00:00', 'UTC')");
      expect(backfill).toContain("timestamp > toDateTime('2024-03-01 10:30:00', 'UTC')");
      expect(backfill).toMatch(/ORDER BY timestamp, uuid_text/);
      expect(backfill).not.toMatch(/inserted_at [<>]/);
    }
  });

  it("of persons is cut by when they were stored for a scheduled run, and by the person's created_at for a backfill", () => {
    expect(personsWindowStatement({ ...window, by: 'inserted_at' }).text).toMatch(/_timestamp >= /);
    const backfill = personsWindowStatement({ ...window, by: 'timestamp' }).text;
    expect(backfill).toContain("argMax(created_at, version) >= toDateTime('2024-03-01 10:00:00', 'UTC')");
    expect(backfill).not.toContain('_timestamp');
  });
});
