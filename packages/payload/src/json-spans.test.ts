import fc from 'fast-check';
import { containerAt, stringEnd, topLevelContainer, valueEnd, type Container } from './json-spans.js';

/** The texts of a container's children, as pairs for an object's members. */
function childTexts(text: string, container: Container | null): string[] | null {
  if (container === null) return null;
  const texts: string[] = [];
  for (let span = 0; span < container.spans.length; span += 2) texts.push(text.slice(container.spans[span], container.spans[span + 1]));
  return texts;
}

const children = (text: string) => childTexts(text, topLevelContainer(text));

/** Units that strain a string scan: quotes, backslash runs, brackets, separators, surrogates. */
const TRICKY_UNIT = fc.oneof(
  fc.constantFrom('"', '\\', '\\\\', '\\"', '[', ']', '{', '}', ',', ':', '/', '\n', '\t', '\u0000', '\u2028', '\ufeff', '\ud83d', '\ude42', '🙂', 'é'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

const WHITESPACE = ['', '', '', ' ', '\n', '\t', '\r\n', ' \n\t '];

/**
 * `value` as JSON text written as a client might: whitespace anywhere between tokens, characters
 * escaped or not, numbers in other forms, each choice drawn from `rolls` (0 to 99).
 */
function writeJson(value: unknown, rolls: Iterator<number>): string {
  const roll = () => rolls.next().value as number;
  const space = () => WHITESPACE[roll() % WHITESPACE.length]!;
  const write = (v: unknown): string => {
    if (typeof v === 'string') return writeString(v, roll);
    if (typeof v === 'number') return writeNumber(v, roll);
    if (Array.isArray(v)) return `[${space()}${v.map((item) => `${write(item)}${space()}`).join(`,${space()}`)}]`;
    if (v !== null && typeof v === 'object') {
      const members = Object.entries(v).map(([key, item]) => `${writeString(key, roll)}${space()}:${space()}${write(item)}${space()}`);
      return `{${space()}${members.join(`,${space()}`)}}`;
    }
    return JSON.stringify(v);
  };
  return `${space()}${write(value)}${space()}`;
}

function writeString(text: string, roll: () => number): string {
  let out = '"';
  for (const unit of text.split('')) {
    const code = unit.charCodeAt(0);
    const escaped = `\\u${code.toString(16).padStart(4, '0')}`;
    if (unit === '"' || unit === '\\') out += roll() < 50 ? `\\${unit}` : escaped;
    else if (code < 0x20) out += roll() < 50 ? JSON.stringify(unit).slice(1, -1) : escaped;
    else if (unit === '/' && roll() < 50) out += '\\/';
    else out += roll() < 10 ? escaped : unit;
  }
  return `${out}"`;
}

function writeNumber(number: number, roll: () => number): string {
  const text = JSON.stringify(number);
  if (!Number.isInteger(number) || text.includes('e')) return text;
  const forms = [text, `${text}.0`, `${text}e0`, `${text}E+0`, `${text}.00e+00`];
  return forms[roll() % forms.length]!;
}

/** That reading `parsed`'s text with its first key as `member` finds that member's children. */
function expectMember(text: string, parsed: Record<string, unknown>): void {
  const [name] = Object.keys(parsed);
  if (name === undefined) return;
  const member = topLevelContainer(text, name)!.member!;
  const value = parsed[name];
  if (value === null || typeof value !== 'object') return expect(member).toBeNull();
  const texts = childTexts(text, member)!;
  const values = Array.isArray(value) ? texts.map((child) => JSON.parse(child)) : Object.fromEntries(Array.from({ length: texts.length / 2 }, (_, i) => [JSON.parse(texts[2 * i]!), JSON.parse(texts[2 * i + 1]!)]));
  expect(values).toEqual(value);
}

describe('stringEnd', () => {
  it('finds the closing quote past escaped quotes and backslashes', () => {
    for (const string of ['""', '"a"', '"\\""', '"a\\\\"', '"\\\\\\""', '"\\\\\\\\"', '"say \\"hi\\" \\\\ \\/ \\u0022"']) {
      expect(stringEnd(`${string}, "next"`, 0)).toBe(string.length - 1);
      expect(JSON.parse(string)).toEqual(expect.any(String));
    }
  });

  it('is -1 for a string that never closes', () => {
    expect(stringEnd('"abc\\"', 0)).toBe(-1);
  });
});

describe('valueEnd', () => {
  it('finds where any value ends, whatever follows it', () => {
    const values = [String.raw`"a\"b\\"`, '12.5e+3', '-1', 'true', 'null', 'false', '{"k":[1,{"]":"["}]}', '[]'];
    for (const value of values) {
      expect(valueEnd(value, 0)).toBe(value.length);
      for (const after of [',', ']', '}', ':', ' ', '\n', '\t', '\r']) expect(valueEnd(`${value}${after}"x"`, 0)).toBe(value.length);
    }
  });

  it('is -1 where no value starts', () => {
    expect(valueEnd('[1,]', 3)).toBe(-1);
    expect(valueEnd('"open', 0)).toBe(-1);
    expect(valueEnd('[[1]', 0)).toBe(-1);
  });
});

describe('topLevelContainer', () => {
  it('finds the elements of an array', () => {
    expect(children('[1,"two",{"three":3},[4],true,false,null]')).toEqual(['1', '"two"', '{"three":3}', '[4]', 'true', 'false', 'null']);
  });

  it('finds each member of an object as its key and then its value', () => {
    expect(children('{"a":1,"b":[2,{"c":"}"}],"":null}')).toEqual(['"a"', '1', '"b"', '[2,{"c":"}"}]', '""', 'null']);
  });

  it('gives the whole container and where it ends', () => {
    expect(topLevelContainer(' {"a":1} ')).toEqual({ kind: 'object', start: 1, end: 8, spans: [2, 5, 6, 7] });
    expect(topLevelContainer('[ ]')).toEqual({ kind: 'array', start: 0, end: 3, spans: [] });
    expect(topLevelContainer('{}')).toEqual({ kind: 'object', start: 0, end: 2, spans: [] });
  });

  it('leaves out the whitespace around children and the container, wherever it is', () => {
    const text = ' \r\n\t[ \n1 ,\t"a" \r,\n[ 1 , 2 ]\t,{ "k" : "v" }\n ] \n';
    expect(children(text)).toEqual(['1', '"a"', '[ 1 , 2 ]', '{ "k" : "v" }']);
    expect(children('{ "a" :\n 1\t, "b"\r\n:"x" }')).toEqual(['"a"', '1', '"b"', '"x"']);
  });

  it('skips brackets, commas, colons and quotes inside strings', () => {
    const text = String.raw`["[{,:}]", "\"", "a\\", "\\\"", "\\", {"\"k\\": "]"}]`;
    expect(children(text)).toEqual([String.raw`"[{,:}]"`, String.raw`"\""`, String.raw`"a\\"`, String.raw`"\\\""`, String.raw`"\\"`, String.raw`{"\"k\\": "]"}`]);
  });

  it('takes unicode as it is, escaped or not', () => {
    expect(children('["é🙂", "\\u00e9\\ud83d\\ude42", "\u2028", {"ключ": "値"}]')).toEqual(['"é🙂"', '"\\u00e9\\ud83d\\ude42"', '"\u2028"', '{"ключ": "値"}']);
  });

  it('takes numbers in every form JSON has', () => {
    expect(children('[0,-0,12,-3.5,1e3,1E+3,2.5e-3,1e999,12345678901234567890]')).toEqual(['0', '-0', '12', '-3.5', '1e3', '1E+3', '2.5e-3', '1e999', '12345678901234567890']);
  });

  it('finds deeply nested children without recursion', () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    expect(children(`[${deep},1]`)).toEqual([deep, '1']);
  });

  it('is null for a scalar, or for text around the container that is not whitespace', () => {
    for (const text of ['1', '"[1]"', 'null', '', '   ', '\ufeff[1]', '[1] x', '[1']) expect(topLevelContainer(text)).toBeNull();
  });

  it('is null for children not separated as JSON separates them', () => {
    for (const text of ['[1 2]', '[1,]', '[,1]', '{"a" 1}', '{"a":1,}', '{1:2}', '{"a":1:2}', '{"a"}', '[1}', '{"a":1]']) expect(topLevelContainer(text)).toBeNull();
  });

  it('reads the value of the last member of a name as a container of its own, in the same pass', () => {
    const text = '{"batch":[1],"x":{"batch":[9]},"b\\u0061tch":[ 3 , [4] ]}';
    const top = topLevelContainer(text, 'batch')!;
    expect(childTexts(text, top.member!)).toEqual(['3', '[4]']);
    expect(top.member).toMatchObject({ kind: 'array', start: text.indexOf('[ 3'), end: text.length - 1 });
    expect(topLevelContainer('{"batch":[1],"batch":5}', 'batch')!.member).toBeNull();
    expect(topLevelContainer('{"x":{"batch":[1]}}', 'batch')!.member).toBeNull();
    expect(topLevelContainer('[{"batch":[1]}]', 'batch')!.member).toBeNull();
    expect(topLevelContainer('{"batch":[1]}')!.member).toBeUndefined();
    // JSON.stringify would escape a lone surrogate; the text may hold it raw.
    expect(topLevelContainer('{"\ud800":[1]}', '\ud800')!.member).toMatchObject({ kind: 'array', spans: [6, 7] });
  });

  it('is null for text that is not a container', () => {
    expect(containerAt('x[1]', 0)).toBeNull();
    expect(childTexts('x[1]', containerAt('x[1]', 1))).toEqual(['1']);
  });

  it('finds the children JSON.parse finds, for any JSON value however it is written', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: TRICKY_UNIT }), fc.infiniteStream(fc.nat(99)), (value, rolls) => {
        const text = writeJson(value, rolls);
        const parsed: unknown = JSON.parse(text);
        const texts = children(text);
        if (parsed === null || typeof parsed !== 'object') {
          expect(texts).toBeNull();
        } else if (Array.isArray(parsed)) {
          expect(texts!.map((child) => JSON.parse(child))).toEqual(parsed);
        } else {
          const members = Array.from({ length: texts!.length / 2 }, (_, i) => [JSON.parse(texts![2 * i]!), JSON.parse(texts![2 * i + 1]!)]);
          expect(members).toHaveLength(Object.keys(parsed).length);
          expect(Object.fromEntries(members)).toEqual(parsed);
          expectMember(text, parsed as Record<string, unknown>);
        }
        for (const child of texts ?? []) expect(child.trim()).toBe(child);
      }),
      { numRuns: 2_000, seed: 20260101 },
    );
  });
});
