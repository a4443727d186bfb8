/**
 * Catalogues of hostile values, and fast-check arbitraries that draw from them. Catalogues hold
 * what a reviewer would try by hand (injections, out-of-range numbers, broken dates, patterns RE2
 * refuses); the arbitraries add fast-check's own edge-biased strings and JSON, so a seeded run
 * covers both the known tricks and shapes nobody thought of.
 */
import fc from 'fast-check';
import { PROPERTY_FILTER_TYPES, PROPERTY_OPERATORS } from '@tributary/property-filters';

/** SQL, HogQL and template injections, and text that breaks naive parsers or escapers. */
export const INJECTIONS: readonly string[] = [
  "' OR 1=1 --",
  "1; DROP TABLE events; --",
  "') UNION ALL SELECT name, 1 FROM system.tables --",
  "\\' OR \\'1\\'=\\'1",
  "1' AND sleep(3) --",
  "x'); SELECT pg_sleep(3); --",
  'event = \'x\' OR 1=1',
  "1 = 1) OR (1 = 1",
  'properties.`$x` = 1',
  '`events`.*',
  '*',
  'count()',
  'sleep(3)',
  'SELECT 1',
  'events WHERE 1=1',
  'toString(1e999)',
  '1e999',
  '-1e999',
  '9223372036854775808',
  '18446744073709551616',
  '1/0',
  '0/0',
  'event % 0',
  'lower()',
  'if(1, 2)',
  'now(1)',
  'concat(1, 2, 3, 4, 5, 6, 7, 8, 9)',
  'system.tables',
  'currentUser()',
  "file('/etc/passwd')",
  "url('http://127.0.0.1:1/', CSV, 'a String')",
  'properties.a.b',
  'person.properties',
  'person.properties.a.b',
  '[1, 2] in [3]',
  'event in (select 1)',
  'event + 1 > 2',
  "timestamp > 'garbage'",
  'timestamp > 1',
  "todate('x')",
  'substring(event, -1, 100000000000000000000)',
  'tostartofday(event)',
  "event like '%%%%%%%%%%%%'",
  "properties.$current_url ilike '\\\\'",
  'toint(properties.x) / 0',
  'round(1, 99999999999)',
  "coalesce(null, null, 'x') = 1",
  "'\\",
  "'unterminated",
  '`unterminated',
  '((((((((((1))))))))))',
  `${'('.repeat(3000)}1${')'.repeat(3000)}`,
  `${'not '.repeat(1500)}1`,
  `${'-'.repeat(4000)}1`,
  `${'1+'.repeat(2000)}1`,
  `[${'['.repeat(2000)}${']'.repeat(2000)}]`,
  `lower(${'lower('.repeat(1000)}event${')'.repeat(1000)})`,
  `${'event = 1 or '.repeat(500)}1`,
  '$$',
  '{{7*7}}',
  '${7*7}',
  '%s%s%s%n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  'é\u200b\u202e',
  '😀'.repeat(50),
  '\\x00',
  '1 -- comment',
  '/* unterminated',
  '# comment',
  '\n\r\t',
  ' ',
  '',
  'null',
  'undefined',
  'true',
  'NaN',
  'Infinity',
  '-0',
  '0x10',
  '1e-400',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  '../../../../etc/passwd',
  '<script>alert(1)</script>',
  'a'.repeat(5000),
];

/** Path segments where an id belongs. */
export const BAD_IDS: readonly string[] = [
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x1f',
  ' 1',
  '1 ',
  '01',
  '2147483648',
  '9223372036854775808',
  '99999999999999999999999999999',
  'abc',
  'null',
  'undefined',
  'NaN',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  '@current',
  '@me',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'gggggggg-gggg-gggg-gggg-gggggggggggg',
  '00000000000000000000000000000000',
  "1' OR '1'='1",
  '1;DROP TABLE persons',
  '1%27%20OR%201%3D1',
  '%00',
  '%FF%FE',
  '%C0%80',
  '%ED%A0%80',
  '%E2%80%AE',
  '%F0%9F%98%80',
  '%',
  '%zz',
  '%2e%2e',
  '..',
  '.',
  '%2F',
  'a'.repeat(2000),
  '9'.repeat(400),
];

/** Values of the wrong type for any field, including the shapes that break naive code. */
export const WRONG_TYPES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0.0,
  1e308,
  -1e308,
  2 ** 53 + 1,
  2 ** 63,
  '',
  ' ',
  'x',
  '1',
  'true',
  'null',
  '2024-01-01',
  '\u0000',
  'a\u0000b',
  '\ud800',
  [],
  [null],
  [[]],
  ['x', 1, null, {}],
  {},
  { '': '' },
  { constructor: { prototype: { polluted: 1 } } },
  { key: { $ne: 1 } },
  'a'.repeat(10_000),
];

/** Dates that are broken, out of every range, or only almost ISO 8601. */
export const BAD_DATES: readonly string[] = [
  '2024-13-45',
  '2024-02-30',
  '0000-00-00',
  '0000-01-01',
  '1000-01-01',
  '1969-12-31T23:59:59Z',
  '2106-02-08',
  '9999-12-31T23:59:59Z',
  '2024-01-01T25:61:61Z',
  '2024-01-01garbage',
  '2024-01-01T00:00:00+99:99',
  '-1h',
  '1d',
  '-0d',
  '-99999999d',
  '-9999999999y',
  '-999999999999999999999y',
  '-2147483649m',
  '-100000w',
  '+275760-09-13',
  '-271821-04-20',
  '1e3d',
  '-7d7d',
  'today',
  'now',
  '',
  ' ',
  '1700000000',
  '1700000000000',
];

/** Regular expressions that JavaScript, ClickHouse's RE2 or Postgres reject, or that backtrack forever. */
export const BAD_PATTERNS: readonly string[] = [
  '(',
  ')',
  '[',
  '\\',
  'a**',
  '*a',
  '(?<name>a)',
  '(?P<name>a)',
  '(?i)abc',
  '(?=a)',
  '(?!a)',
  '(?<=a)b',
  '(a)\\1',
  'a{1001}',
  'a{99999}',
  '(a{1000}){1000}',
  '\\p{Foo}',
  '\\pL',
  '\\C',
  '\\Q.*\\E',
  '\\Z',
  '\\z',
  '\\cA',
  '\\0',
  '[\\b]',
  '\\x{110000}',
  '\\u0041',
  '[[:foo:]]',
  '[[:alpha:]]',
  '[z-a]',
  '(a+)+$',
  '(.*a){20}',
  '^(([a-z])+.)+[A-Z]([a-z])+$',
  '\u0000',
  '\ud800',
  '.'.repeat(5000),
];

/** Property filter values beyond type mistakes: the ones each operator family reads differently. */
export const FILTER_VALUES: readonly unknown[] = [...WRONG_TYPES, ...BAD_DATES, ...BAD_PATTERNS, ...INJECTIONS.slice(0, 20), [1, 'a', true], ['', ''], Array.from({ length: 2000 }, (_, i) => `v${i}`)];

/** Every operator and filter type, plus ones no reader knows. */
export const OPERATORS: readonly string[] = [...PROPERTY_OPERATORS, 'EXACT', 'contains', 'between', 'flag_evaluates_to', '', ' exact', '__proto__', 'exact; DROP TABLE'];
export const FILTER_TYPES: readonly unknown[] = [...PROPERTY_FILTER_TYPES, undefined, 'element', 'hogql', 'flag', 'session', 'data_warehouse', '', 1, null];

export const toJson = (value: unknown): string => JSON.stringify(value) ?? 'null';

/** A property filter with one hostile part, the rest as a reader expects. */
export const propertyFilterArb: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    key: fc.oneof(fc.constantFrom('email', '$current_url', 'plan'), fc.constantFrom(...INJECTIONS), fc.string()),
    type: fc.constantFrom(...FILTER_TYPES),
    operator: fc.constantFrom(...OPERATORS),
    value: fc.oneof(fc.constantFrom(...FILTER_VALUES), fc.jsonValue({ maxDepth: 3 }), fc.string({ unit: 'binary' })),
    group_type_index: fc.constantFrom(undefined, 0, 4, 5, -1, 1.5, '0', null, 1e9),
    negation: fc.constantFrom(undefined, true, 'yes', 1),
  })
  .map((filter) => Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)));

/**
 * Every operator, each with `perOperator` values: one its shape takes and the rest from the
 * families that break readers (wrong types, broken dates and patterns, NUL, lone surrogates).
 */
export function everyOperatorFilters(type: string | undefined, perOperator: number, seed: number): Record<string, unknown>[] {
  const fitting: Record<string, unknown> = { is_date_before: '-7d', is_date_after: '2024-01-01', is_date_exact: '2024-01-01', regex: '^a.*$', not_regex: 'a|b', in: 1, not_in: '1', exact: ['a', 'b'], is_not: 'x', gt: 1, gte: '1.5', lt: 1e308, lte: '-1' };
  const hostile: unknown[] = [...WRONG_TYPES, ...BAD_DATES, ...BAD_PATTERNS, 'a\u0000b', '\ud800', '99999999999', '1e999'];
  const draws = fc.sample(fc.shuffledSubarray(hostile, { minLength: perOperator - 1, maxLength: perOperator - 1 }), { seed, numRuns: PROPERTY_OPERATORS.length });
  return PROPERTY_OPERATORS.flatMap((operator, i) =>
    [fitting[operator] ?? 'x', ...draws[i]!].map((value) => ({ key: 'hostile', ...(type === undefined ? {} : { type }), operator, value })),
  );
}

/** Text of any kind: catalogue entries or fast-check strings of every unit (lone surrogates included). */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 50 }) },
  { weight: 1, arbitrary: fc.constantFrom(...BAD_DATES, ...BAD_PATTERNS, ...BAD_IDS) },
);

/** A hostile value of any JSON type. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...WRONG_TYPES) },
  { weight: 2, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.array(propertyFilterArb, { maxLength: 3 }) },
);

const built = new Map<string, string>();
const once = (key: string, build: () => string) => {
  let text = built.get(key);
  if (text === undefined) built.set(key, (text = build()));
  return text;
};

/** Deep nesting as text, so building it costs no stack: `[[[...]]]` or `{"a":{"a":...}}`. Built once a run. */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return once(`deep ${depth} ${kind}`, () => (kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));
}

/** A JSON body with `field` set to the raw JSON text `inner`, as parts, so a large `inner` is never copied. */
export function withRawField(base: Record<string, unknown>, field: string, inner: Buffer | string): Buffer[] {
  const text = toJson({ ...base, [field]: null });
  const marker = `${JSON.stringify(field)}:null`;
  const at = text.indexOf(marker) + marker.length - 'null'.length;
  return [Buffer.from(text.slice(0, at)), Buffer.isBuffer(inner) ? inner : Buffer.from(inner), Buffer.from(text.slice(at + 'null'.length))];
}

let tenMegabytes: Buffer | undefined;
/** `"aaaa..."`: a 10 MB JSON string, built once and shared by every case that sends it. */
export function tenMegabyteString(): Buffer {
  tenMegabytes ??= Buffer.concat([Buffer.from('"'), Buffer.alloc(10 * 1024 * 1024, 'a'), Buffer.from('"')]);
  return tenMegabytes;
}

/** A JSON array of `count` small values, as text. Built once a run. */
export function hugeArray(count: number, item = '{"event":"e","properties":{"distinct_id":"d"}}'): string {
  return once(`array ${count} ${item}`, () => `[${Array.from({ length: count }, () => item).join(',')}]`);
}

/** `"k0":0,"k1":1,...`: members to splice into an object. Built once a run. */
export function manyMembers(count: number): string {
  return once(`members ${count}`, () => Array.from({ length: count }, (_, i) => `"k${i}":${i}`).join(','));
}
