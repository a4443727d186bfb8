import { randomUUID } from 'node:crypto';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import type { EventRowOut } from '@tributary/clickhouse';
import { RowBuffer } from '../src/clickhouse-rows.js';
import { MOST_REFUSED_ROWS, RowWriter } from '../src/clickhouse-writer.js';

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
  rows.events.add(eventRow(uuid, timestamp));
  return { rows, uuid };
}

function eventRow(uuid: string, timestamp: string): EventRowOut {
  const now = '2026-01-02 03:04:05';
  return {
    uuid, event: 'written alone', properties: '{}', timestamp, timestamp_ms: 0, team_id: teamId, distinct_id: 'row-writer', elements_chain: '',
    created_at: now, person_id: randomUUID(), person_properties: '{}', person_created_at: now,
    group_0: '', group_1: '', group_2: '', group_3: '', group_4: '',
  };
}

const storedUuids = async (uuids: readonly string[]) =>
  (await clickhouse.query<{ uuid: string }>(sql`SELECT DISTINCT toString(uuid) AS uuid FROM events WHERE team_id = ${teamId} AND has(${[...uuids]}, toString(uuid))`)).map((r) => r.uuid).sort();

test('a chunk whose rows ClickHouse refuses no longer holds back the chunks it was inserted with, and alone its refused row is left out and given back', async () => {
  const writer = new RowWriter(clickhouse, { minIntervalMs: 500, maxRowsPerInsert: config.ingestInsertMaxRows });
  const earlier = chunkWithEvent('2026-01-02 03:04:05');
  await writer.write(earlier.rows);
  const refused = chunkWithEvent('-271821-04-20 00:00:00');
  const good = chunkWithEvent('2026-01-02 03:04:05');
  // Submitted within the interval after the earlier insert, both go into one insert, which fails as a whole.
  const first = await Promise.allSettled([writer.write(refused.rows), writer.write(good.rows)]);
  expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);

  // Each partition tries again with the same rows: the good ones get in; the refused row, alone, is given back rather than written.
  const [again, goodAgain] = await Promise.all([writer.write(refused.rows), writer.write(good.rows)]);
  expect(goodAgain).toEqual([]);
  expect(again).toEqual([{ table: 'events', line: expect.any(Buffer), reason: expect.stringMatching(/^Code: 41, .*Cannot read DateTime/) }]);
  expect(again[0]!.line.toString()).toMatch(new RegExp(`^${refused.uuid}\twritten alone\t\{\}\t-271821-04-20 00:00:00\t.*\n$`));
  // Rows are released (their memory freed) once ClickHouse took them or they were given back.
  for (const written of [earlier.rows, good.rows, refused.rows]) expect(() => written.events.stream()).toThrow('rows used after they were released');
  expect(good.rows.events.length).toBe(1);
  expect(await storedUuids([earlier.uuid, good.uuid, refused.uuid])).toEqual([earlier.uuid, good.uuid].sort());
});

test('alone, rows ClickHouse refuses are found among many, in each table they are in, and given back once, the rest written; a retry after the write gets the same answer', async () => {
  const writer = new RowWriter(clickhouse, { maxRowsPerInsert: config.ingestInsertMaxRows });
  const rows = new RowBuffer();
  const uuids = Array.from({ length: 1_000 }, () => randomUUID());
  const bad = new Set([0, 377, 378, 999]);
  uuids.forEach((uuid, i) => rows.events.add(eventRow(uuid, bad.has(i) ? '-271821-04-20 00:00:00' : '2026-01-02 03:04:05')));
  rows.addWarning({ team_id: teamId, source: 'ingest', type: 'refused-warning', details: '{}', timestamp: '-271821-04-20 00:00:00' });
  rows.addWarning({ team_id: teamId, source: 'ingest', type: 'kept-warning', details: '{}', timestamp: '2026-01-02 03:04:05' });
  // The first insert is refused as a whole; the next attempt is alone.
  await expect(writer.write(rows)).rejects.toThrow(/Code: 41/);
  const refused = await writer.write(rows);
  expect(refused.map((r) => [r.table, r.line.toString().split('\t', 1)[0]])).toEqual([
    ['ingestion_warnings', String(teamId)],
    ...[...bad].map((i) => ['events', uuids[i]]),
  ]);
  expect(await writer.write(rows)).toBe(refused);
  expect(await storedUuids(uuids)).toEqual(uuids.filter((_, i) => !bad.has(i)).sort());
  const warnings = await clickhouse.query<{ type: string }>(sql`SELECT type FROM ingestion_warnings WHERE team_id = ${teamId} AND type LIKE '%-warning'`);
  expect(warnings.map((w) => w.type)).toEqual(['kept-warning']);
});

test('when ClickHouse refuses more rows than it could be refusing for their content, the rows wait, kept whole, rather than all going elsewhere', async () => {
  const writer = new RowWriter(clickhouse, { maxRowsPerInsert: config.ingestInsertMaxRows });
  const rows = new RowBuffer();
  const uuids = Array.from({ length: 200 }, () => randomUUID());
  for (const uuid of uuids) rows.events.add(eventRow(uuid, '-271821-04-20 00:00:00'));
  await expect(writer.write(rows)).rejects.toThrow(/Code: 41/);
  await expect(writer.write(rows)).rejects.toThrow(`ClickHouse refused more than ${MOST_REFUSED_ROWS} rows of events since it last took any`);
  expect(rows.events.rowLines()).toHaveLength(200);
  expect(await storedUuids(uuids)).toEqual([]);
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
