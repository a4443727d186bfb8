/** As many digits as always fit: integer's in 2^31, bigint's in a double without rounding. */
const DIGITS = { integer: /^\d{1,9}$/, bigint: /^\d{1,15}$/ } as const;
const LIMIT = { integer: 1e9, bigint: 1e15 } as const;

/**
 * A row's id as a path or a filter gives it: a positive whole number, or its digits, that the
 * column can hold. Anything else is no row's id, never a database error: Postgres refuses to
 * compare an integer column with a number too large for it.
 */
export function rowId(value: unknown, column: 'integer' | 'bigint' = 'integer'): number | null {
  const id = typeof value === 'number' ? value : typeof value === 'string' && DIGITS[column].test(value) ? Number(value) : Number.NaN;
  return Number.isInteger(id) && id > 0 && id < LIMIT[column] ? id : null;
}
