import { sql, type Sql } from './sql.js';

/**
 * A top-level property of a JSON text column, as text: strings unescaped, other JSON values as
 * written, '' when absent. `visitParam*` are the JSON functions both 18.16 and current releases have.
 */
export function propertyText(column: Sql, key: string): Sql {
  return rawJsonText(sql`visitParamExtractRaw(${column}, ${key})`);
}

/** A JSON value's raw text (`visitParamExtractRaw`'s) as text: a string unquoted, anything else as written. */
export function rawJsonText(raw: Sql): Sql {
  // The raw value is extracted once (ClickHouse computes the repeated expression once); a string is
  // unquoted by parsing it alone, rather than the whole properties a second time.
  return sql`if(substring(${raw}, 1, 1) = '"', visitParamExtractString(concat('{"v":', ${raw}, '}'), 'v'), ${raw})`;
}

export function propertyNumber(column: Sql, key: string): Sql {
  return sql`toFloat64OrNull(visitParamExtractRaw(${column}, ${key}))`;
}

/** Whether the property is there at all; a JSON `null` counts as set, as it does for flags. */
export function propertyIsSet(column: Sql, key: string): Sql {
  return sql`visitParamHas(${column}, ${key})`;
}
