/**
 * The one way SQL for ClickHouse is built. ClickHouse 18.16 has no query parameters, so every
 * value is rendered here as an escaped literal and every identifier is checked against a strict
 * pattern (or an allow-list by the caller). Nothing else in the code base puts input into SQL.
 */
export class Sql {
  private constructor(readonly text: string) {}

  /** For text written by this code base, never for input: that goes through `sql` values. */
  static trusted(text: string): Sql {
    return new Sql(text);
  }

  toString(): string {
    return this.text;
  }
}

export type SqlValue = Sql | string | number | bigint | boolean | null | Date | readonly SqlValue[];

export class SqlError extends Error {}

const STRING_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

export function quoteString(value: string): string {
  return `'${value.replace(/[\\'\0\b\f\n\r\t]/g, (c) => STRING_ESCAPES[c] ?? c)}'`;
}

const twoDigits = (n: number) => (n < 10 ? `0${n}` : String(n));

/** `YYYY-MM-DD hh:mm:ss` in UTC: the text form every ClickHouse version parses. */
export function formatDateTime(date: Date): string {
  const year = date.getUTCFullYear();
  if (Number.isNaN(year)) throw new SqlError('invalid date');
  // Ingest formats a few of these per event; built from the fields it costs a third of toISOString's round trip.
  if (year < 1000 || year > 9999) return date.toISOString().slice(0, 19).replace('T', ' ');
  return `${year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())} ${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}`;
}

function literal(value: SqlValue): string {
  if (value instanceof Sql) return value.text;
  if (value === null) return 'NULL';
  if (typeof value === 'string') return quoteString(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new SqlError(`cannot render ${value} as a SQL number`);
    return Number.isInteger(value) ? value.toFixed(0) : String(value);
  }
  if (value instanceof Date) return `toDateTime(${quoteString(formatDateTime(value))}, 'UTC')`;
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  throw new SqlError(`unsupported SQL value of type ${typeof value}`);
}

/** Tagged template: literal text is trusted, every interpolation is a value or a fragment. */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): Sql {
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    text += literal(value) + (strings[i + 1] ?? '');
  });
  return Sql.trusted(text);
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A backquoted identifier; anything but letters, digits and underscores is refused. */
export function ident(name: string): Sql {
  if (!IDENTIFIER.test(name)) throw new SqlError(`invalid identifier: ${JSON.stringify(name)}`);
  return Sql.trusted(`\`${name}\``);
}

/** An identifier chosen by input, accepted only when the caller allows it. */
export function allowedIdent<T extends string>(name: string, allowed: readonly T[]): Sql {
  if (!(allowed as readonly string[]).includes(name)) throw new SqlError(`identifier not allowed: ${JSON.stringify(name)}`);
  return ident(name);
}

export function join(fragments: readonly Sql[], separator = ', '): Sql {
  return Sql.trusted(fragments.map((f) => f.text).join(separator));
}

/** Fragments ANDed together; no fragments means no condition (`1`). */
export function and(fragments: readonly Sql[]): Sql {
  return fragments.length === 0 ? Sql.trusted('1') : Sql.trusted(fragments.map((f) => `(${f.text})`).join(' AND '));
}

/** A LIKE pattern matching `value` anywhere, with its own `%`, `_` and `\` taken literally. */
export function containsPattern(value: string): Sql {
  return Sql.trusted(quoteString(`%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
}

/**
 * `left IN (values)` with the values as a tuple (18.16 rejects arrays after IN). An empty list
 * matches nothing, and its negation everything, instead of being a syntax error.
 */
export function inList(left: Sql, values: readonly SqlValue[], negate = false): Sql {
  if (values.length === 0) return Sql.trusted(negate ? '1' : '0');
  return Sql.trusted(`${left.text} ${negate ? 'NOT IN' : 'IN'} (${values.map(literal).join(', ')})`);
}

/**
 * The deepest nesting of brackets in a statement, outside string literals and quoted identifiers
 * (as `quoteString` and `ident` write them: a backslash escapes the next character).
 */
export function bracketDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== null) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '`' || c === '"') quote = c;
    else if (c === '(' || c === '[') deepest = Math.max(deepest, ++depth);
    else if (c === ')' || c === ']') depth--;
  }
  return deepest;
}
