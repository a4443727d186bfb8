import { join, sql, type Sql } from './sql.js';

/** The characters JSON.stringify escapes with a short form; every other control character is written `\u00xx`. */
const SHORT_ESCAPES: readonly (readonly [string, string])[] = [
  ['"', '\\"'],
  ['\\', '\\\\'],
  ['\b', '\\b'],
  ['\f', '\\f'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
];

/**
 * A String as the JSON string literal JSON.stringify writes for it, built by ClickHouse, which has
 * no JSON encoder in 18.16. Most values need no escape and are only quoted; the others are rebuilt
 * byte by byte, and the bytes of a multi-byte character pass through as they were.
 */
export function jsonStringLiteral(value: Sql): Sql {
  const needsEscape = sql`match(${value}, ${'[\\x00-\\x1f"\\\\]'})`;
  // 18.16 computes both branches of an if for every row: the byte by byte branch is given the
  // value only where it is needed, and the empty string elsewhere.
  const dirty = sql`if(${needsEscape}, ${value}, '')`;
  // The lambda's parameter has a name no column has: 18.16 reads a column's alias in its place.
  const byte = sql`substring(${dirty}, json_text_offset + 1, 1)`;
  const escapes = join(SHORT_ESCAPES.map(([character, escape]) => sql`${byte} = ${character}, ${escape}`));
  const escaped = sql`multiIf(${escapes}, reinterpretAsUInt8(${byte}) < 32, concat(${'\\u00'}, lower(hex(${byte}))), ${byte})`;
  return sql`concat('"', if(${needsEscape}, arrayStringConcat(arrayMap(json_text_offset -> ${escaped}, range(length(${dirty})))), ${value}), '"')`;
}

/**
 * A column of JSON object text as it may go into a JSON line: `{}` unless it is an object, and
 * tabs and line breaks read as spaces. Valid JSON has them only between tokens (inside strings
 * they are escaped), so the object means the same and its line stays one line.
 */
export function jsonObjectText(value: Sql): Sql {
  const isObject = sql`substring(${value}, 1, 1) = '{' AND substring(${value}, length(${value}), 1) = '}'`;
  // Searching for each of the three is faster than one regular expression over the whole text.
  const spread = sql`position(${value}, '\\n') > 0 OR position(${value}, '\\t') > 0 OR position(${value}, '\\r') > 0`;
  return sql`if(${isObject}, if(${spread}, replaceRegexpAll(if(${spread}, ${value}, ''), ${'[\\t\\n\\r]'}, ' '), ${value}), '{}')`;
}
