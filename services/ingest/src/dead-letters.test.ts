import { CompressionTypes, type ProducerRecord } from 'kafkajs';
import { refusedRowLetter, sendDeadLetters } from './dead-letters.js';

describe('dead letters', () => {
  const row = { table: 'person', line: Buffer.from('0190f3c0-0000-7000-8000-000000000000\t2026-01-02 03:04:05\n'), reason: 'Code: 41, e.displayText() = DB::Exception: Cannot read DateTime' };
  const failedAt = new Date('2026-11-27T17:00:00.000Z');
  const sent: ProducerRecord[] = [];
  const producer = {
    send: async (record: ProducerRecord) => {
      sent.push(record);
      return [];
    },
  };
  beforeEach(() => (sent.length = 0));

  it('go compressed, acknowledged by every replica, saying why and which partition and chunk a refused row came from', async () => {
    await sendDeadLetters(producer, 'events_dead_letter', [refusedRowLetter(row, { first: '12', last: '19' })], { topic: 'events_realtime', partition: 3 }, failedAt);
    expect(sent).toEqual([
      {
        topic: 'events_dead_letter',
        acks: -1,
        compression: CompressionTypes.LZ4,
        messages: [
          {
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
          },
        ],
      },
    ]);
  });

  it('of the person outbox name it as their source, as its copies come from no partition', async () => {
    await sendDeadLetters(producer, 'events_dead_letter', [refusedRowLetter(row)], 'person outbox', failedAt);
    expect(sent[0]!.messages[0]!.headers).toEqual({ reason: `ClickHouse refused the row: ${row.reason}`, source: 'person outbox', failed_at: '2026-11-27T17:00:00.000Z', clickhouse_table: 'person' });
  });
});
