import { TabSeparatedRows, tabSeparatedField } from './tab-separated.js';

describe('TabSeparated encoding', () => {
  it('escapes what would end a field or a row, and backslashes', () => {
    expect(tabSeparatedField('a\tb\nc\\d\re\0f')).toBe('a\\tb\\nc\\\\d\\re\\0f');
    expect(tabSeparatedField('{"k":"say \\"hi\\""}')).toBe('{"k":"say \\\\"hi\\\\""}');
    expect(tabSeparatedField('plain text')).toBe('plain text');
    expect(tabSeparatedField(42)).toBe('42');
  });

  it('writes the named columns in order, one line per row, and appends other rows after', () => {
    const rows = new TabSeparatedRows<{ a: string; b: number }>(['b', 'a']);
    rows.add({ a: 'x\ty', b: 1 });
    const more = new TabSeparatedRows<{ a: string; b: number }>(['b', 'a']);
    more.add({ a: 'z', b: 2 });
    rows.append(more);
    expect(rows.length).toBe(2);
    expect(rows.text()).toBe('1\tx\\ty\n2\tz\n');
  });
});
