import { jsonLine, type RunCursor } from '@tributary/batch-exports';
import { createTestTenant, eventRow, EVENT_ROW_COLUMNS } from '@tributary/test-support';
import { encodedRowCursor, readEncodedEventsWindow, readEventsWindow } from '../src/batch-exports/window-reader.js';
import { clickhouse, config, pool, WINDOW } from './export-fixture.js';

afterAll(async () => {
  await pool.end();
  await clickhouse.close();
});

const at = (offsetMs: number) => new Date(WINDOW.start.getTime() + offsetMs).toISOString().slice(0, 19).replace('T', ' ');

/**
 * An S3 export takes its events' JSON lines as ClickHouse writes them; they must be the lines the
 * worker writes from the same rows read as records, byte for byte, whatever the text holds.
 */
describe('events read as the JSON lines ClickHouse writes', () => {
  it('are the lines written from the records, in the same order, with the same cursors', async () => {
    const { project } = await createTestTenant(pool, config);
    const strings = ['plain', 'say "hi"', 'C:\\dir', 'tab\tand\nnewline', 'bell\u0007 nul\u0000', 'é 日本 🎉', '\u2028', ''];
    const rows = strings.map((text, i) =>
      eventRow(project.id, `user ${text}`, `event ${text}`, '2024-03-01 09:00:00', { text, n: i }, {
        timestamp_ms: i * 7,
        elements_chain: text,
        person_properties: i % 2 ? '{\n  "pretty": "printed",\t"n": 1\r\n}' : i === 2 ? 'not json' : JSON.stringify({ text }),
        inserted_at: at(1000 * (i % 3)),
      }),
    );
    await clickhouse.insert('events', EVENT_ROW_COLUMNS, rows);
    const window = { teamId: project.id, start: WINDOW.start, end: WINDOW.end, cursor: null };

    const expected: { line: string; cursor: RunCursor }[] = [];
    for await (const chunk of readEventsWindow(clickhouse, window)) for (const row of chunk) expected.push({ line: jsonLine('events', row.record), cursor: row.cursor });
    const encoded: { line: string; event: string; cursor: RunCursor }[] = [];
    for await (const chunk of readEncodedEventsWindow(clickhouse, window)) {
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
    const { project } = await createTestTenant(pool, config);
    await clickhouse.insert('events', EVENT_ROW_COLUMNS, Array.from({ length: 20 }, (_, i) => eventRow(project.id, 'u', 'e', '2024-03-01 09:00:00', { i }, { inserted_at: at(1000 * (i % 4)) })));
    const all: string[] = [];
    for await (const chunk of readEncodedEventsWindow(clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, cursor: null })) all.push(...chunk.map((row) => row.line.toString()));
    const first: { cursor: RunCursor }[] = [];
    for await (const chunk of readEventsWindow(clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, cursor: null })) first.push(...chunk);
    const rest: string[] = [];
    for await (const chunk of readEncodedEventsWindow(clickhouse, { teamId: project.id, start: WINDOW.start, end: WINDOW.end, cursor: first[11]!.cursor })) rest.push(...chunk.map((row) => row.line.toString()));
    expect(rest).toEqual(all.slice(12));
  });
});
