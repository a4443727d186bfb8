import { randomUUID } from 'node:crypto';
import { jsonLine, type RunCursor } from '@tributary/batch-exports';
import type { ClickHouse } from '@tributary/clickhouse';
import { eventRow, EVENT_ROW_COLUMNS } from '@tributary/test-support';
import { WINDOW } from './export-window.js';
import { encodedRowCursor, readEncodedEventsWindow, readEventsWindow, readPersonsWindow } from '../src/batch-exports/window-reader.js';


/** Where the suite runs: a ClickHouse, and a new project id for each test's rows. */
export interface ReaderTarget {
  clickhouse: ClickHouse;
  newTeamId(): Promise<number>;
}

/**
 * The export window reader's statements on real rows: `window-reader.integration.test.ts` runs
 * them on the stack's ClickHouse 18.16, `window-reader-chdb.test.ts` on ClickHouse 26, with the
 * same expectations.
 */
export function windowReaderSuite(target: () => ReaderTarget): void {
  const at = (offsetMs: number) => new Date(WINDOW.start.getTime() + offsetMs).toISOString().slice(0, 19).replace('T', ' ');

  /**
   * An S3 export takes its events' JSON lines as ClickHouse writes them; they must be the lines the
   * worker writes from the same rows read as records, byte for byte, whatever the text holds.
   */
  describe('events read as the JSON lines ClickHouse writes', () => {
    it('are the lines written from the records, in the same order, with the same cursors', async () => {
      const project = { id: await target().newTeamId() };
      const strings = ['plain', 'say "hi"', 'C:\\dir', 'tab\tand\nnewline', 'bell\u0007 nul\u0000', 'é 日本 🎉', '\u2028', ''];
      const rows = strings.map((text, i) =>
        eventRow(project.id, `user ${text}`, `event ${text}`, '2024-03-01 09:00:00', { text, n: i }, {
          timestamp_ms: i * 7,
          elements_chain: text,
          person_properties: i % 2 ? '{\n  "pretty": "printed",\t"n": 1\r\n}' : i === 2 ? 'not json' : JSON.stringify({ text }),
          inserted_at: at(1000 * (i % 3)),
        }),
      );
      await target().clickhouse.insert('events', EVENT_ROW_COLUMNS, rows);
      const window = { teamId: project.id, start: WINDOW.start, end: WINDOW.end, by: 'inserted_at' as const, cursor: null };

      const expected: { line: string; cursor: RunCursor }[] = [];
      for await (const chunk of readEventsWindow(target().clickhouse, window)) for (const row of chunk) expected.push({ line: jsonLine('events', row.record), cursor: row.cursor });
      const encoded: { line: string; event: string; cursor: RunCursor }[] = [];
      for await (const chunk of readEncodedEventsWindow(target().clickhouse, window)) {
        for (const row of chunk) encoded.push({ line: row.line.toString(), event: row.event.toString(), cursor: encodedRowCursor(row) });
      }

      expect(expected).toHaveLength(strings.length);
      // Pretty-printed JSON is kept on one line; the record path passes it on as it is stored.
      const oneLine = (line: string) => line.replace(/[\t\r\n](?!$)/g, ' ');
      expect(encoded.map(({ line, cursor }) => ({ line, cursor }))).toEqual(expected.map(({ line, cursor }) => ({ line: oneLine(line), cursor })));
      for (const { line, event } of encoded) {
        const parsed = JSON.parse(line) as { event: string };
        expect(event).toBe(JSON.stringify(parsed.event));
      }
      const byText = new Map(encoded.map(({ line }) => [(JSON.parse(line) as { properties: { text: string } }).properties.text, JSON.parse(line)]));
      expect(byText.get('say "hi"')).toMatchObject({ event: 'event say "hi"', distinct_id: 'user say "hi"', elements_chain: 'say "hi"' });
      expect(byText.get('bell\u0007 nul\u0000')).toMatchObject({ timestamp: '2024-03-01T09:00:00.028Z', person_properties: { text: 'bell\u0007 nul\u0000' } });
      expect(byText.get('tab\tand\nnewline')).toMatchObject({ person_properties: { pretty: 'printed', n: 1 } });
      expect(byText.get('C:\\dir')).toMatchObject({ person_properties: {} });
    });

    it('resume after a cursor as the records do', async () => {
      const project = { id: await target().newTeamId() };
      await target().clickhouse.insert('events', EVENT_ROW_COLUMNS, Array.from({ length: 20 }, (_, i) => eventRow(project.id, 'u', 'e', '2024-03-01 09:00:00', { i }, { inserted_at: at(1000 * (i % 4)) })));
      const all: string[] = [];
      for await (const chunk of readEncodedEventsWindow(target().clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, by: 'inserted_at' as const, cursor: null })) all.push(...chunk.map((row) => row.line.toString()));
      const first: { cursor: RunCursor }[] = [];
      for await (const chunk of readEventsWindow(target().clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, by: 'inserted_at' as const, cursor: null })) first.push(...chunk);
      const rest: string[] = [];
      for await (const chunk of readEncodedEventsWindow(target().clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, by: 'inserted_at' as const, cursor: first[11]!.cursor })) rest.push(...chunk.map((row) => row.line.toString()));
      expect(rest).toEqual(all.slice(12));
    });
  });

  /**
   * Issue 58: history imported today must land in its past windows when backfilled. A backfill
   * selects a window's events by when they happened, a scheduled run by when they were stored.
   */
  describe('a backfill window', () => {
    const TODAY = '2026-01-02 03:04:05';
    const read = async (teamId: number, by: 'timestamp' | 'inserted_at', cursor: RunCursor | null = null) => {
      const uuids: string[] = [];
      for await (const chunk of readEventsWindow(target().clickhouse, { teamId, start: WINDOW.start, end: WINDOW.end, by, cursor })) uuids.push(...chunk.map((row) => String(row.record.uuid)));
      return uuids;
    };

    it("selects the events that happened in it, each once, and not those only stored in it", async () => {
      const project = { id: await target().newTeamId() };
      const imported = Array.from({ length: 6 }, (_, i) => eventRow(project.id, 'u', 'imported', at(60_000 * i), { i }, { inserted_at: TODAY }));
      const late = eventRow(project.id, 'u', 'stored in the window, happened before it', '2024-02-01 00:00:00', {}, { inserted_at: at(1000) });
      // An import retried: the same event stored again, later.
      await target().clickhouse.insert('events', EVENT_ROW_COLUMNS, [...imported, late, { ...imported[0]!, inserted_at: '2026-01-03 00:00:00' }]);

      expect((await read(project.id, 'timestamp')).sort()).toEqual(imported.map((row) => row.uuid).sort());
      expect(await read(project.id, 'inserted_at')).toEqual([late.uuid]);
    });

    it('resumes after a cursor by the time the events happened', async () => {
      const project = { id: await target().newTeamId() };
      await target().clickhouse.insert('events', EVENT_ROW_COLUMNS, Array.from({ length: 20 }, (_, i) => eventRow(project.id, 'u', 'e', at(1000 * (i % 4)), { i }, { inserted_at: TODAY })));
      const first: { cursor: RunCursor; uuid: string }[] = [];
      for await (const chunk of readEventsWindow(target().clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, by: 'timestamp', cursor: null })) first.push(...chunk.map((row) => ({ cursor: row.cursor, uuid: String(row.record.uuid) })));
      // Five events a second: the twelfth happened in the third.
      expect(first[11]!.cursor.inserted_at).toBe(at(2000));
      const rest: string[] = [];
      for await (const chunk of readEncodedEventsWindow(target().clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, by: 'timestamp', cursor: first[11]!.cursor })) {
        rest.push(...chunk.map((row) => (JSON.parse(row.line.toString()) as { uuid: string }).uuid));
      }
      expect(rest).toEqual(first.slice(12).map((row) => row.uuid));
    });

    it("of a persons export selects the persons created in it (their first event's time), not those stored in it", async () => {
      const project = { id: await target().newTeamId() };
      const old = randomUUID();
      const recent = randomUUID();
      await target().clickhouse.insert('person', ['id', 'created_at', 'team_id', 'properties', 'is_identified', 'is_deleted', 'version', '_timestamp'], [
        { id: old, created_at: at(0), team_id: project.id, properties: '{"v":1}', is_identified: 0, is_deleted: 0, version: 0, _timestamp: TODAY },
        { id: old, created_at: at(0), team_id: project.id, properties: '{"v":2}', is_identified: 0, is_deleted: 0, version: 1, _timestamp: TODAY },
        { id: recent, created_at: '2025-06-01 00:00:00', team_id: project.id, properties: '{}', is_identified: 0, is_deleted: 0, version: 0, _timestamp: at(0) },
      ]);
      await target().clickhouse.insert('person_distinct_id', ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version', '_timestamp'], [
        { team_id: project.id, distinct_id: 'old-a', person_id: old, is_deleted: 0, version: 0, _timestamp: TODAY },
        { team_id: project.id, distinct_id: 'old-b', person_id: old, is_deleted: 0, version: 0, _timestamp: TODAY },
        { team_id: project.id, distinct_id: 'recent', person_id: recent, is_deleted: 0, version: 0, _timestamp: at(0) },
      ]);
      const persons = async (by: 'timestamp' | 'inserted_at') => {
        const records: { distinct_id: unknown; properties: unknown }[] = [];
        for await (const chunk of readPersonsWindow(target().clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, by, cursor: null })) records.push(...chunk.map((row) => row.record as never));
        return records.map((record) => [record.distinct_id, record.properties]);
      };
      expect(await persons('timestamp')).toEqual([['old-a', '{"v":2}'], ['old-b', '{"v":2}']]);
      expect(await persons('inserted_at')).toEqual([['recent', '{}']]);
    });
  });
}
