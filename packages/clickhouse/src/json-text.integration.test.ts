import fc from 'fast-check';
import { loadConfig } from '@tributary/config';
import { createClickHouse } from './client.js';
import { jsonObjectText, jsonStringLiteral } from './json-text.js';
import { join, sql } from './sql.js';

const clickhouse = createClickHouse(loadConfig());
afterAll(() => clickhouse.close());

/** Each value through ClickHouse as `render` builds it, one line each, in order. */
async function rendered(values: string[], render: typeof jsonStringLiteral): Promise<string[]> {
  const rows = join(values.map((value, i) => sql`SELECT ${i} AS n, ${render(sql`${value}`)} AS text`), ' UNION ALL ');
  const lines: string[] = [];
  for await (const chunk of clickhouse.streamLines(sql`SELECT text FROM (${rows}) ORDER BY n`)) lines.push(...chunk.map((line) => line.toString().slice(0, -1)));
  return lines;
}

describe('JSON text built by ClickHouse', () => {
  it('writes a string as JSON.stringify does: quotes, backslashes, short and \\u00xx escapes, multi-byte characters as they are', async () => {
    const values = ['', 'plain', 'say "hi"', 'C:\\path', 'tab\there', 'line\nbreak\r\n', '\b\f\u0000\u0001\u001f', 'é ü 日本 🎉', '\u007f\u2028', `'quoted'`];
    expect(await rendered(values, jsonStringLiteral)).toEqual(values.map((value) => JSON.stringify(value)));
  });

  it('agrees with JSON.stringify on any string', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 40 }), async (values) => {
        const wellFormed = values.map((value) => value.toWellFormed());
        expect(await rendered(wellFormed, jsonStringLiteral)).toEqual(wellFormed.map((value) => JSON.stringify(value)));
      }),
      { numRuns: 25 },
    );
  });

  it('keeps an object on one line and writes anything else as {}', async () => {
    const values = ['{"a":1}', '{\n  "a": "x\\ty",\t"b": [1, 2]\r\n}', '', 'null', '[1]', '"{}"', '{"open":'];
    const objects = await rendered(values, jsonObjectText);
    expect(objects).toEqual(['{"a":1}', '{   "a": "x\\ty", "b": [1, 2]  }', '{}', '{}', '{}', '{}', '{}']);
    expect(JSON.parse(objects[1]!)).toEqual(JSON.parse(values[1]!));
  });
});
