import { SqlError, allowedIdent, and, bracketDepth, containsPattern, formatDateTime, ident, inList, join, quoteString, sql } from './sql.js';

describe('sql template', () => {
  it('renders strings as escaped literals', () => {
    expect(sql`SELECT ${"it's"}`.text).toBe("SELECT 'it\\'s'");
  });

  it('escapes backslashes before quotes so a trailing backslash cannot end the literal', () => {
    expect(sql`x = ${"\\' OR 1=1 --"}`.text).toBe("x = '\\\\\\' OR 1=1 --'");
  });

  it('escapes control characters', () => {
    expect(quoteString('a\nb\tc\0d\re')).toBe("'a\\nb\\tc\\0d\\re'");
  });

  it('renders numbers, bigints, booleans and null', () => {
    expect(sql`${1}, ${2.5}, ${-3}, ${10n}, ${true}, ${false}, ${null}`.text).toBe('1, 2.5, -3, 10, 1, 0, NULL');
  });

  it('refuses numbers that have no SQL form', () => {
    expect(() => sql`${Number.NaN}`).toThrow(SqlError);
    expect(() => sql`${Number.POSITIVE_INFINITY}`).toThrow(SqlError);
  });

  it('renders dates as UTC DateTime literals', () => {
    expect(sql`${new Date('2024-02-03T04:05:06.789Z')}`.text).toBe("toDateTime('2024-02-03 04:05:06', 'UTC')");
    expect(() => sql`${new Date('nope')}`).toThrow(SqlError);
  });

  it('renders arrays element by element', () => {
    expect(sql`IN ${['a', "b'"]}`.text).toBe("IN ['a', 'b\\'']");
    expect(sql`${[1, [2, 3]]}`.text).toBe('[1, [2, 3]]');
  });

  it('embeds fragments without re-escaping them', () => {
    const inner = sql`team_id = ${1}`;
    expect(sql`SELECT 1 WHERE ${inner}`.text).toBe('SELECT 1 WHERE team_id = 1');
  });

  it('never treats an interpolated string as SQL text', () => {
    const input = "1; DROP TABLE events";
    expect(sql`SELECT ${input}`.text).toBe("SELECT '1; DROP TABLE events'");
  });
});

describe('identifiers', () => {
  it('backquotes valid identifiers', () => {
    expect(ident('events').text).toBe('`events`');
  });

  it('refuses identifiers with anything but letters, digits and underscores', () => {
    for (const bad of ['a b', 'a`b', '1abc', '', 'x;DROP', 'événement']) {
      expect(() => ident(bad)).toThrow(SqlError);
    }
  });

  it('accepts input identifiers only from an allow-list', () => {
    expect(allowedIdent('event', ['event', 'timestamp']).text).toBe('`event`');
    expect(() => allowedIdent('properties', ['event'])).toThrow(/not allowed/);
  });
});

describe('combinators', () => {
  it('joins fragments', () => {
    expect(join([sql`a`, sql`b`]).text).toBe('a, b');
  });

  it('ANDs conditions, and an empty list is always true', () => {
    expect(and([sql`a = ${1}`, sql`b = ${'x'}`]).text).toBe("(a = 1) AND (b = 'x')");
    expect(and([]).text).toBe('1');
  });

  it('builds LIKE patterns that take % and _ literally', () => {
    expect(containsPattern('50%_off').text).toBe("'%50\\\\%\\\\_off%'");
  });

  it('formats date-times without milliseconds', () => {
    expect(formatDateTime(new Date('2024-01-01T00:00:00.999Z'))).toBe('2024-01-01 00:00:00');
    expect(formatDateTime(new Date('2026-11-25T09:05:07Z'))).toBe('2026-11-25 09:05:07');
    expect(formatDateTime(new Date('1999-12-31T23:59:59Z'))).toBe('1999-12-31 23:59:59');
    expect(formatDateTime(new Date('0999-03-04T05:06:07Z'))).toBe('0999-03-04 05:06:07');
    expect(() => formatDateTime(new Date('nope'))).toThrow(SqlError);
  });
});

describe('inList', () => {
  it('renders values as a tuple after IN', () => {
    expect(inList(sql`event`, ['a', "b'"]).text).toBe("event IN ('a', 'b\\'')");
    expect(inList(sql`event`, ['a'], true).text).toBe("event NOT IN ('a')");
  });

  it('an empty list matches nothing, and its negation everything', () => {
    expect(inList(sql`event`, []).text).toBe('0');
    expect(inList(sql`event`, [], true).text).toBe('1');
  });
});

describe('bracketDepth', () => {
  it('counts nested brackets, not those inside literals or quoted identifiers', () => {
    expect(bracketDepth('SELECT 1')).toBe(0);
    expect(bracketDepth('SELECT f(g([1, (2)]))')).toBe(4);
    expect(bracketDepth(sql`SELECT lower(${"((((\\'(("})`.text)).toBe(1);
    expect(bracketDepth('SELECT `a((((` FROM t WHERE (x)')).toBe(1);
  });
});
