import { cachedTreeCount, loadHogQLParser, parseExpr, parseSelect } from './parse.js';

beforeAll(() => loadHogQLParser());

describe('parsed trees are cached by text', () => {
  it('gives a text seen before its tree again without running the parser, each caller its own copy', async () => {
    const text = 'SELECT event, count() FROM events GROUP BY event';
    const before = cachedTreeCount();
    const first = await parseSelect(text);
    expect(cachedTreeCount()).toBe(before + 1);
    const second = await parseSelect(text);
    expect(cachedTreeCount()).toBe(before + 1);
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    (first as { select: unknown[] }).select.length = 0;
    expect((await parseSelect(text)).node === 'SelectQuery' && (await parseSelect(text) as { select: unknown[] }).select).toHaveLength(2);
  });

  it('keeps a select and an expression of the same text apart', async () => {
    await expect(parseExpr('1 + 1')).resolves.toMatchObject({ node: 'ArithmeticOperation' });
    await expect(parseSelect('1 + 1')).rejects.toThrow(/Syntax error/);
  });
});
