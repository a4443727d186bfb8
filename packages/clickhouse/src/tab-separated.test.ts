import { text } from 'node:stream/consumers';
import { EncodedJsonFields, RowHeads, TabSeparatedRows, tabSeparatedField, tabSeparatedJson, type EncodedField } from './tab-separated.js';

describe('TabSeparated encoding', () => {
  it('escapes what would end a field or a row, and backslashes', () => {
    expect(tabSeparatedField('a\tb\nc\\d\re\0f')).toBe('a\\tb\\nc\\\\d\\re\\0f');
    expect(tabSeparatedField('{"k":"say \\"hi\\""}')).toBe('{"k":"say \\\\"hi\\\\""}');
    expect(tabSeparatedField('plain text')).toBe('plain text');
    expect(tabSeparatedField(42)).toBe('42');
  });

  it('escapes only the backslashes of JSON text, the one special character JSON.stringify leaves raw', () => {
    const text = JSON.stringify({ k: 'tab\there\nnewline "quoted" back\\slash', c: '\u0000\r' });
    expect(text).not.toMatch(/[\t\n\r\0]/);
    expect(tabSeparatedJson(text)).toBe(tabSeparatedField(text));
    expect(tabSeparatedJson('{"a":1}')).toBe('{"a":1}');
  });

  it('completes rows whose first columns were encoded ahead, in the order they are completed, leaving out those never completed', async () => {
    type Row = { a: string; j: string; b: number; c: string };
    const rows = new TabSeparatedRows<Row>(['a', 'j', 'b', 'c'], ['j']);
    const heads = new RowHeads(rows, ['a', 'j']);
    const long = 'é'.repeat(3_000);
    const handles = Array.from({ length: 50 }, (_, i) => heads.add({ a: `a${i}\t`, j: JSON.stringify({ i, s: i % 7 ? 'x' : long, q: 'back\\slash' }) }));
    rows.add({ a: 'whole', j: '{}', b: -1, c: 'row' });
    for (let i = 49; i >= 0; i--) if (i % 5 !== 0) heads.complete(handles[i]!, { b: i, c: `c\n${i}` });
    const expected = ['whole\t{}\t-1\trow'];
    for (let i = 49; i >= 0; i--) {
      if (i % 5 === 0) continue;
      expected.push(`a${i}\\t\t${JSON.stringify({ i, s: i % 7 ? 'x' : long, q: 'back\\slash' }).replace(/\\/g, '\\\\')}\t${i}\tc\\n${i}`);
    }
    expect(rows.length).toBe(41);
    expect(await text(rows.stream())).toBe(`${expected.join('\n')}\n`);
  });

  it('writes JSON fields encoded ahead as it writes the same text given as a string, in any column, across blocks, until released', async () => {
    type Row = { a: string; j: string | EncodedField; b: number };
    const fields = new EncodedJsonFields();
    const texts = Array.from({ length: 400 }, (_, i) => JSON.stringify({ i, s: 'é✓😀'.repeat(i % 90), q: 'back\\slash\ttab' }));
    const encoded = texts.map((t) => fields.add(t));
    const direct = new TabSeparatedRows<Row>(['a', 'j', 'b'], ['j']);
    const ahead = new TabSeparatedRows<Row>(['a', 'j', 'b'], ['j']);
    const heads = new RowHeads(ahead, ['a']);
    texts.forEach((t, i) => {
      direct.add({ a: `a${i}`, j: t, b: i });
      heads.complete(heads.add({ a: `a${i}` }), { j: fields.field(encoded[i]!), b: i });
    });
    expect(await text(ahead.stream())).toBe(await text(direct.stream()));
    const memory = fields.field(encoded[0]!).bytes.buffer;
    fields.release();
    expect(memory.byteLength).toBe(0);
    expect(() => fields.field(encoded[0]!)).toThrow(/after they were released/);
  });

  it('takes back the fields added since a mark, freeing the blocks they needed, and gives their numbers and room to the next ones', async () => {
    const fields = new EncodedJsonFields();
    const kept = fields.add('{"kept":"back\\\\slash"}');
    const mark = fields.mark();
    const taken = fields.add('{"taken":1}');
    // Larger than any block so far: it needs a block of its own.
    const large = fields.field(fields.add(JSON.stringify({ large: 'x'.repeat(100_000) }))).bytes.buffer;
    fields.rewind(mark);
    expect(large.byteLength).toBe(0);
    const next = fields.add('{"next":2}');
    expect(next).toBe(taken);
    const rows = new TabSeparatedRows<{ j: string | EncodedField }>(['j'], ['j']);
    rows.add({ j: fields.field(kept) });
    rows.add({ j: fields.field(next) });
    expect(await text(rows.stream())).toBe('{"kept":"back\\\\\\\\slash"}\n{"next":2}\n');
    fields.release();
  });

  it('refuses heads that are not the first columns of their rows', () => {
    const rows = new TabSeparatedRows<{ a: string; b: string }>(['a', 'b']);
    expect(() => new RowHeads(rows, ['b'])).toThrow(/not the first columns/);
  });

  it('writes the named columns in order, one line per row, and appends other rows after', async () => {
    const rows = new TabSeparatedRows<{ a: string; b: number }>(['b', 'a']);
    rows.add({ a: 'x\ty', b: 1 });
    const more = new TabSeparatedRows<{ a: string; b: number }>(['b', 'a']);
    more.add({ a: 'z', b: 2 });
    rows.append(more);
    expect(rows.length).toBe(2);
    expect(await text(rows.stream())).toBe('1\tx\\ty\n2\tz\n');
  });

  it('keeps every byte of many rows, of any size and script, across the blocks it writes into', async () => {
    const rows = new TabSeparatedRows<{ s: string }>(['s']);
    const values = Array.from({ length: 3_000 }, (_, i) => `${'é✓😀'.repeat(i % 50)}-${'x'.repeat(i % 700)}-${i}`);
    for (const s of values) rows.add({ s });
    rows.add({ s: 'y'.repeat(3 * 1024 * 1024) });
    expect(rows.length).toBe(3_001);
    expect(await text(rows.stream())).toBe(`${values.join('\n')}\n${'y'.repeat(3 * 1024 * 1024)}\n`);
  });

  it('gives each row back as its own line, across blocks and escaped line breaks, and makes rows of the same table from any of them', async () => {
    type Row = { n: number; s: string; j: string };
    const rows = new TabSeparatedRows<Row>(['n', 's', 'j'], ['j']);
    const values: Row[] = Array.from({ length: 2_000 }, (_, i) => ({
      n: i,
      s: `${'line\nbreak\t\\'.repeat(i % 40)}${'é'.repeat(i % 300)}`,
      j: JSON.stringify({ text: 'a\nb\\c'.repeat(i % 20) }),
    }));
    for (const row of values) rows.add(row);
    const more = new TabSeparatedRows<Row>(['n', 's', 'j'], ['j']);
    more.add({ n: 2_000, s: 'appended', j: '{}' });
    rows.append(more);
    const whole = await text(rows.stream());
    const lines = rows.rowLines();
    expect(lines).toHaveLength(2_001);
    expect(lines.map((line) => line.toString()).join('')).toBe(whole);
    const { n, s, j } = values[1_999]!;
    expect(lines[1_999]!.toString()).toBe(`${n}\t${tabSeparatedField(s)}\t${tabSeparatedJson(j)}\n`);
    const odd = rows.withLines(lines.filter((_, i) => i % 2 === 1));
    expect([odd.length, odd.columns, odd.json]).toEqual([1_000, ['n', 's', 'j'], [false, false, true]]);
    expect(await text(odd.stream())).toBe(whole.split('\n').slice(0, -1).filter((_, i) => i % 2 === 1).map((line) => `${line}\n`).join(''));
  });

  it('frees the memory of the blocks it wrote on release, and not that of rows it appended, which free their own', async () => {
    const blocksOf = async (rows: TabSeparatedRows<{ s: string }>) => {
      const blocks: Buffer[] = [];
      for await (const block of rows.stream()) blocks.push(block as Buffer);
      return blocks;
    };
    const rows = new TabSeparatedRows<{ s: string }>(['s']);
    rows.add({ s: 'x'.repeat(10_000) });
    const appended = new TabSeparatedRows<{ s: string }>(['s']);
    appended.add({ s: 'kept' });
    rows.append(appended);
    const [own, theirs] = await blocksOf(rows);
    rows.release();
    expect([rows.length, own!.length, theirs!.length]).toEqual([2, 0, 5]);
    expect(await text(appended.stream())).toBe('kept\n');
    appended.release();
    expect([appended.length, theirs!.length]).toEqual([1, 0]);
    expect(() => appended.stream()).toThrow('rows used after they were released');
    expect(() => appended.add({ s: 'late' })).toThrow('rows used after they were released');
    expect(() => appended.append(new TabSeparatedRows<{ s: string }>(['s']))).toThrow('rows used after they were released');
  });

  it('frees the memory of heads on release, leaving the rows they completed whole', async () => {
    const rows = new TabSeparatedRows<{ a: string; b: string }>(['a', 'b']);
    const heads = new RowHeads(rows, ['a']);
    heads.complete(heads.add({ a: 'head'.repeat(2_000) }), { b: 'rest' });
    heads.release();
    expect(await text(rows.stream())).toBe(`${'head'.repeat(2_000)}\trest\n`);
  });
});
