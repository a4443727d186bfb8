import { cachedTreeCount, loadHogQLParser, parseExpr, parseOrderExpr, parseSelect } from './parse.js';

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

describe('an ORDER BY expression is read whole', () => {
  it('refuses text after the expression, which the grammar stops before and would leave out silently', async () => {
    await expect(parseOrderExpr('timestamp DESC; DROP TABLE events')).rejects.toThrow('Syntax error: unexpected text after the ORDER BY expression: "; DROP TABLE events"');
    await expect(parseOrderExpr('timestamp DESC, event')).rejects.toThrow(/unexpected text after the ORDER BY expression: ", event"/);
    await expect(parseOrderExpr('timestamp DESC -- newest first')).resolves.toMatchObject({ order: 'DESC' });
    await expect(parseOrderExpr(' count() ASC /* c */ ')).resolves.toMatchObject({ order: 'ASC' });
  });
});
