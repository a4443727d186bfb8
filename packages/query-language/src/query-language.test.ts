import { bracketDepth } from '@tributary/clickhouse';
import { compileExpression, MAX_EXPRESSION_DEPTH, parseExpression, QueryLanguageError } from './index.js';

const compile = (source: string) => compileExpression(parseExpression(source)).text;

describe('parsing', () => {
  it('reads property access, comparisons and boolean logic with the usual precedence', () => {
    expect(parseExpression("properties.$browser = 'Chrome' or event = 'x' and not distinct_id = 'a'")).toEqual({
      kind: 'binary',
      op: 'or',
      left: { kind: 'binary', op: '=', left: { kind: 'field', path: ['properties', '$browser'] }, right: { kind: 'literal', value: 'Chrome' } },
      right: {
        kind: 'binary',
        op: 'and',
        left: { kind: 'binary', op: '=', left: { kind: 'field', path: ['event'] }, right: { kind: 'literal', value: 'x' } },
        right: { kind: 'unary', op: 'not', arg: { kind: 'binary', op: '=', left: { kind: 'field', path: ['distinct_id'] }, right: { kind: 'literal', value: 'a' } } },
      },
    });
  });

  it('binds multiplication tighter than addition', () => {
    expect(compile('1 + 2 * 3')).toBe('(1 + (2 * 3))');
  });

  it('reads keywords in any case', () => {
    expect(compile("event = 'a' AND event != 'b'")).toBe("((event = 'a') AND (event != 'b'))");
  });

  it('names the position of a syntax error', () => {
    expect(() => parseExpression("event = 'a' )")).toThrow(/position 13/);
    expect(() => parseExpression("event = 'unterminated")).toThrow(QueryLanguageError);
  });
});

describe('expressions from a hostile client', () => {
  it('are refused with a QueryLanguageError, never another error a route would answer with a 500', () => {
    // Each was a 500: Object.prototype's names read as columns or functions, an infinite number
    // rendered into SQL, and the parser overflowing the stack.
    for (const source of ['constructor', '__proto__', 'toString', 'constructor(1)', 'hasOwnProperty(event)', '1e999 > event', '-1e999', `${'('.repeat(5000)}1${')'.repeat(5000)}`, `${'not '.repeat(5000)}1`]) {
      expect(() => compile(source)).toThrow(QueryLanguageError);
    }
  });

  it('nested deeper than 64 levels are refused, naming the depth: ClickHouse 18.16 died parsing `1+1+...+1` two thousand deep', () => {
    expect(() => parseExpression(`${'1+'.repeat(2000)}1`)).toThrow(`the expression nests 2001 levels deep; at most ${MAX_EXPRESSION_DEPTH} are allowed`);
    expect(() => parseExpression(`${'not '.repeat(1500)}1`)).toThrow(/nests 1501 levels deep/);
    expect(() => parseExpression(`${'lower('.repeat(65)}event${')'.repeat(65)}`)).toThrow(/nests 66 levels deep/);
    expect(() => parseExpression(`${'-'.repeat(MAX_EXPRESSION_DEPTH - 1)}1`)).not.toThrow();
  });

  it('a long chain of or (or and) is one level, compiled flat as ClickHouse parses it', () => {
    const alternatives = Array.from({ length: 500 }, (_, i) => `event = 'e${i}'`);
    const sql = compile(alternatives.join(' or '));
    expect(sql.startsWith("((event = 'e0') OR (event = 'e1') OR ")).toBe(true);
    expect(bracketDepth(sql)).toBe(2);
    expect(compile("event = 'a' and event = 'b' and (event = 'c' or event = 'd')")).toBe("((event = 'a') AND (event = 'b') AND ((event = 'c') OR (event = 'd')))");
  });

  it('compiles whatever the depth limit lets through to SQL well inside what the statement guard sends', () => {
    const deepest = `${'toint('.repeat(MAX_EXPRESSION_DEPTH - 2)}properties.n${')'.repeat(MAX_EXPRESSION_DEPTH - 2)} > 1`;
    expect(bracketDepth(compile(deepest))).toBeLessThan(150);
  });
});

describe('compiling', () => {
  it('reads event properties and person properties as text', () => {
    expect(compile("properties.$browser = 'Chrome'")).toContain("visitParamExtractString(properties, '$browser')");
    expect(compile("person.properties.email like '%@x.com'")).toContain("visitParamExtractString(person_properties, 'email')");
  });

  it('reads a property as a number when compared with a number', () => {
    expect(compile('properties.price > 10')).toBe("(toFloat64OrNull(visitParamExtractRaw(properties, 'price')) > 10)");
  });

  it('compiles ilike without ILIKE, which 18.16 lacks', () => {
    expect(compile("event ilike '%CLICK%'")).toBe("(lower(event) LIKE lower('%CLICK%'))");
  });

  it('compiles allowed functions case-insensitively and checks their arity', () => {
    expect(compile('lower(event)')).toBe('lower(event)');
    expect(compile('toInt(properties.n)')).toContain('toInt64OrNull(toString(');
    expect(() => compile('lower(event, event)')).toThrow(/takes 1 arguments/);
  });

  it('refuses functions outside the allow-list, naming them', () => {
    expect(() => compile("file('/etc/passwd')")).toThrow(/function file\(\) is not allowed/);
    expect(() => compile('sleep(3)')).toThrow(/not allowed/);
  });

  it('refuses unknown columns and nested property paths', () => {
    expect(() => compile('password = 1')).toThrow(/unknown field password/);
    expect(() => compile('properties.a.b = 1')).toThrow(/top-level/);
  });

  it('keeps injection attempts inside escaped literals', () => {
    expect(() => parseExpression("event = 'x'' OR 1=1 --'")).toThrow(QueryLanguageError);
    expect(() => parseExpression("event = 'x' OR 1=1; DROP TABLE events")).toThrow(QueryLanguageError);
    expect(compile("event = 'a\\' OR 1=1 --'")).toBe("(event = 'a\\' OR 1=1 --')");
  });

  it('escapes property names, so a crafted key cannot break out of its literal', () => {
    expect(compile("properties.`a'b` = 'x'")).toContain("'a\\'b'");
  });

  it('compiles arrays for IN', () => {
    expect(compile("event in ['a', 'b']")).toBe("(event IN ('a', 'b'))");
    expect(compile("event not in []")).toBe('(1)');
  });
});
