import { deadLetterMessages, refusedRowLetter } from './dead-letters.js';

describe('dead letters', () => {
  const row = { table: 'person', line: Buffer.from('0190f3c0-0000-7000-8000-000000000000\t2026-01-02 03:04:05\n'), reason: 'Code: 41, e.displayText() = DB::Exception: Cannot read DateTime' };

  it('say why, and which partition and chunk a refused row came from', () => {
    const [message] = deadLetterMessages([refusedRowLetter(row, { first: '12', last: '19' })], { topic: 'events_realtime', partition: 3 }, '2026-11-27T17:00:00.000Z');
    expect(message).toEqual({
      key: null,
      value: row.line,
      headers: {
        reason: `ClickHouse refused the row: ${row.reason}`,
        source_topic: 'events_realtime',
        source_partition: '3',
        source_offset: '12',
        failed_at: '2026-11-27T17:00:00.000Z',
        clickhouse_table: 'person',
        source_last_offset: '19',
      },
    });
  });

  it('of the person outbox name it as their source, as its copies come from no partition', () => {
    const [message] = deadLetterMessages([refusedRowLetter(row)], 'person outbox', '2026-11-27T17:00:00.000Z');
    expect(message!.headers).toEqual({ reason: `ClickHouse refused the row: ${row.reason}`, source: 'person outbox', failed_at: '2026-11-27T17:00:00.000Z', clickhouse_table: 'person' });
  });
});
