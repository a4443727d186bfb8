import { ClickHouseError, type ClickHouse } from '@tributary/clickhouse';
import type { EventRowOut } from '@tributary/clickhouse';
import { RowBuffer } from './clickhouse-rows.js';
import { MOST_REFUSED_ROWS, RowWriter } from './clickhouse-writer.js';

describe('RowWriter', () => {
  it('passes on a failed insert only once the inserts beside it have ended, as the rows are then written again and freed', async () => {
    const ended: string[] = [];
    const clickhouse = {
      insertEncoded: async (table: string) => {
        if (table === 'person') throw new Error('person refused');
        await new Promise((resolve) => setTimeout(resolve, 50));
        ended.push(table);
      },
    } as unknown as ClickHouse;
    await expect(new RowWriter(clickhouse, { maxRowsPerInsert: 100 }).write(eventsNamed(['one']))).rejects.toThrow('person refused');
    expect(ended.sort()).toEqual(['groups', 'ingestion_warnings', 'person_distinct_id']);
  });
});

const eventRow = (name: string): EventRowOut => ({
  uuid: '0190f3c0-0000-7000-8000-000000000000', event: name, properties: '{}', timestamp: '2026-01-02 03:04:05', timestamp_ms: 0, team_id: 1,
  distinct_id: 'd', elements_chain: '', created_at: '2026-01-02 03:04:05', person_id: '0190f3c0-0000-7000-8000-000000000000',
  person_properties: '{}', person_created_at: '2026-01-02 03:04:05', group_0: '', group_1: '', group_2: '', group_3: '', group_4: '',
});

/**
 * ClickHouse as the finder sees it: each insert is taken whole, or refused whole for a row whose
 * event name starts with `bad` (as a value that does not parse), or fails as a store away once
 * `awayAfter` inserts were made.
 */
function fakeClickHouse() {
  const state = { inserts: 0, awayAfter: Number.POSITIVE_INFINITY, stored: [] as string[] };
  const clickhouse = {
    insertEncoded: async (table: string, rows: RowBuffer['events']) => {
      if (rows.length === 0) return;
      state.inserts += 1;
      if (state.inserts > state.awayAfter) throw new ClickHouseError('connect ECONNREFUSED 127.0.0.1:8123', null);
      const names = rows.rowLines().map((line) => line.toString().split('\t')[1]!);
      if (names.some((name) => name.startsWith('bad'))) throw new ClickHouseError('Code: 41, e.displayText() = DB::Exception: Cannot read DateTime\n\nRow 1: ...', 41);
      state.stored.push(...names.map((name) => `${table}:${name}`));
    },
  } as unknown as ClickHouse;
  return { clickhouse, state };
}

function eventsNamed(names: readonly string[]): RowBuffer {
  const rows = new RowBuffer();
  for (const name of names) rows.events.add(eventRow(name));
  return rows;
}

/** Writes as a partition does: the first attempt goes into a shared insert, the next alone. */
async function writeAsPartition(writer: RowWriter, rows: RowBuffer) {
  const first = await writer.write(rows).then((refused) => ({ refused }), (error: unknown) => ({ error }));
  return 'refused' in first ? first.refused : writer.write(rows);
}

describe('RowWriter with rows ClickHouse refuses for their content', () => {
  it('finds the refused rows by halving, in their order, writes every other row once, and gives the same answer to a retry', async () => {
    const { clickhouse, state } = fakeClickHouse();
    const writer = new RowWriter(clickhouse, { maxRowsPerInsert: 100_000 });
    const names = Array.from({ length: 4_000 }, (_, i) => ([5, 2_718, 2_719, 3_999].includes(i) ? `bad-${i}` : `good-${i}`));
    const rows = eventsNamed(names);
    const refused = await writeAsPartition(writer, rows);
    expect(refused.map((r) => [r.table, r.line.toString().split('\t')[1], r.reason])).toEqual(
      [5, 2_718, 2_719, 3_999].map((i) => ['events', `bad-${i}`, 'Code: 41, e.displayText() = DB::Exception: Cannot read DateTime']),
    );
    // Copied out: the rows' own memory is freed once written.
    expect(refused[0]!.line.toString()).toMatch(/^0190f3c0-0000-7000-8000-000000000000\tbad-5\t\{\}\t/);
    expect(state.stored.sort()).toEqual(names.filter((n) => n.startsWith('good')).map((n) => `events:${n}`).sort());
    // Four bad rows among 4,000: a dozen rounds of halving, a few inserts each.
    expect(state.inserts).toBeLessThan(2 + 4 * 2 * 12);
    const inserts = state.inserts;
    expect(await writer.write(rows)).toBe(refused);
    expect(state.inserts).toBe(inserts);
  });

  it(`takes more than ${MOST_REFUSED_ROWS} rows of a table refused since it last took any as the table refusing everything, and makes them wait, across small writes too`, async () => {
    const { clickhouse, state } = fakeClickHouse();
    const writer = new RowWriter(clickhouse, { maxRowsPerInsert: 100_000 });
    // Writes of three rows each, every row refused: as a broken view refuses a quiet project's events.
    const answers: (number | string)[] = [];
    for (let w = 0; w < 12; w++) {
      const rows = eventsNamed([0, 1, 2].map((i) => `bad-${w}-${i}`));
      answers.push(await writeAsPartition(writer, rows).then((refused) => refused.length, (error: Error) => error.message));
    }
    // 30 rows refused and kept elsewhere; then every write waits, each trying its whole insert only.
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(3));
    expect(answers[10]).toMatch(`ClickHouse refused more than ${MOST_REFUSED_ROWS} rows of events since it last took any`);
    const inserts = state.inserts;
    const waiting = eventsNamed(['bad-waiting', 'good-waiting']);
    await expect(writeAsPartition(writer, waiting)).rejects.toThrow('taken as the table refusing them all');
    expect(state.inserts).toBe(inserts + 2);
    // Once the table takes rows again, the refused rows are rows again.
    expect(await writer.write(eventsNamed(['good-other']))).toEqual([]);
    expect((await writer.write(waiting)).map((r) => r.line.toString().split('\t')[1])).toEqual(['bad-waiting']);
    expect(state.stored).toEqual(['events:good-other', 'events:good-waiting']);
  });

  it('stops halving when ClickHouse goes away mid-way, counts nothing refused from it, and halves again from the start on the next attempt', async () => {
    const { clickhouse, state } = fakeClickHouse();
    const writer = new RowWriter(clickhouse, { maxRowsPerInsert: 100_000 });
    const names = Array.from({ length: 64 }, (_, i) => (i === 40 ? 'bad-40' : `good-${i}`));
    const rows = eventsNamed(names);
    await expect(writer.write(rows)).rejects.toThrow(/Code: 41/);
    // The whole insert alone, then two rounds of halving, and the store is gone.
    state.awayAfter = state.inserts + 5;
    await expect(writer.write(rows)).rejects.toThrow('ECONNREFUSED');
    state.awayAfter = Number.POSITIVE_INFINITY;
    expect((await writer.write(rows)).map((r) => r.line.toString().split('\t')[1])).toEqual(['bad-40']);
    // Parts taken before it went away are sent again, which ClickHouse's versions absorb.
    expect(new Set(state.stored)).toEqual(new Set(names.filter((n) => n !== 'bad-40').map((n) => `events:${n}`)));
    // Nothing of the attempt cut short counted towards the limit: 32 more refused rows are still rows.
    const more = eventsNamed(Array.from({ length: MOST_REFUSED_ROWS - 1 }, (_, i) => `bad-more-${i}`));
    await expect(writer.write(more)).rejects.toThrow(/Code: 41/);
    expect(await writer.write(more)).toHaveLength(MOST_REFUSED_ROWS - 1);
  });

  it(`tries rows with more than ${MOST_REFUSED_ROWS} refused among themselves whole from then on, however the table does with other rows`, async () => {
    const { clickhouse, state } = fakeClickHouse();
    const writer = new RowWriter(clickhouse, { maxRowsPerInsert: 100_000 });
    const rows = eventsNamed(Array.from({ length: 100 }, (_, i) => (i % 3 === 0 ? `bad-${i}` : `good-${i}`)));
    await expect(writeAsPartition(writer, rows)).rejects.toThrow('taken as the table refusing them all');
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserts = state.inserts;
      await expect(writer.write(rows)).rejects.toThrow('taken as the table refusing them all');
      expect(state.inserts).toBe(inserts + 1);
      // The table takes other rows meanwhile: these still wait, for whoever mends them or it.
      expect(await writer.write(eventsNamed([`other-good-${attempt}`]))).toEqual([]);
    }
  });
});
