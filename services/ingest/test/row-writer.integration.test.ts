import { randomUUID } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import { RowBuffer, type EventRowOut } from '../src/clickhouse-rows.js';
import { RowWriter } from '../src/clickhouse-writer.js';

/**
 * Chunks of different partitions share inserts. When ClickHouse refuses one chunk's rows for
 * their content, the others must still get in on their next attempt rather than be grouped with
 * the refused rows again and wait for as long as those fail.
 */
const config = testConfig();
const clickhouse = createClickHouse(config);
const teamId = 900_000_000 + Math.floor(Math.random() * 1_000_000);

afterAll(async () => {
  await clickhouse.close();
});

function chunkWithEvent(timestamp: string): { rows: RowBuffer; uuid: string } {
  const uuid = randomUUID();
  const rows = new RowBuffer();
  const now = '2026-01-02 03:04:05';
  const row: EventRowOut = {
    uuid, event: 'written alone', properties: '{}', timestamp, timestamp_ms: 0, team_id: teamId, distinct_id: 'row-writer', elements_chain: '',
    created_at: now, person_id: randomUUID(), person_properties: '{}', person_created_at: now,
    group_0: '', group_1: '', group_2: '', group_3: '', group_4: '', inserted_at: now,
  };
  rows.events.add(row);
  return { rows, uuid };
}

test('a chunk whose rows ClickHouse refuses no longer holds back the chunks it was inserted with', async () => {
  const writer = new RowWriter(clickhouse, { minIntervalMs: 500, maxRowsPerInsert: config.ingestInsertMaxRows });
  const earlier = chunkWithEvent('2026-01-02 03:04:05');
  await writer.write(earlier.rows);
  const refused = chunkWithEvent('-271821-04-20 00:00:00');
  const good = chunkWithEvent('2026-01-02 03:04:05');
  // Submitted within the interval after the earlier insert, both go into one insert, which fails as a whole.
  const first = await Promise.allSettled([writer.write(refused.rows), writer.write(good.rows)]);
  expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);

  // Each partition tries again with the same rows: the good ones get in, the refused ones alone fail.
  const second = await Promise.allSettled([writer.write(refused.rows), writer.write(good.rows)]);
  expect(second.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
  // Rows are released (their memory freed) once ClickHouse took them, never before: refused ones are sent again whole.
  for (const written of [earlier.rows, good.rows]) expect(() => written.events.stream()).toThrow('rows used after they were released');
  expect((await text(refused.rows.events.stream())).length).toBeGreaterThan(0);
  expect(good.rows.events.length).toBe(1);
  const stored = await clickhouse.query<{ uuid: string }>(sql`SELECT toString(uuid) AS uuid FROM events WHERE team_id = ${teamId}`);
  expect(stored.map((r) => r.uuid).sort()).toEqual([earlier.uuid, good.uuid].sort());
});

test('rows written already are not sent again when a caller retries its step after the write', async () => {
  const writer = new RowWriter(clickhouse, { maxRowsPerInsert: config.ingestInsertMaxRows });
  const chunk = chunkWithEvent('2026-01-02 03:04:05');
  await writer.write(chunk.rows);
  // Released by the first write; sent again, they would fail on every retry, and so would any insert they joined.
  await writer.write(chunk.rows);
  const stored = await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE team_id = ${teamId} AND uuid = ${chunk.uuid}`);
  expect(Number(stored[0]!.n)).toBe(1);
});
