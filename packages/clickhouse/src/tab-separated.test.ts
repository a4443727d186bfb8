import { text } from 'node:stream/consumers';
import { TabSeparatedRows, tabSeparatedField } from './tab-separated.js';

describe('TabSeparated encoding', () => {
  it('escapes what would end a field or a row, and backslashes', () => {
    expect(tabSeparatedField('a\tb\nc\\d\re\0f')).toBe('a\\tb\\nc\\\\d\\re\\0f');
    expect(tabSeparatedField('{"k":"say \\"hi\\""}')).toBe('{"k":"say \\\\"hi\\\\""}');
    expect(tabSeparatedField('plain text')).toBe('plain text');
    expect(tabSeparatedField(42)).toBe('42');
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
});
