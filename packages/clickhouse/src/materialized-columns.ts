import { createHash } from 'node:crypto';
import { quoteString, sql } from './sql.js';
import type { ClickHouse } from './client.js';

/**
 * Materialized properties, as PostHog has them: a property of an event's JSON that queries read
 * often gets a column of its own on `events`, which ClickHouse fills as rows are written (and,
 * once asked, for the parts written before), so a query reads that small column instead of every
 * event's whole JSON. The column holds the property's raw JSON value (`visitParamExtractRaw`), the
 * one form every read the printer makes (as text, as a number, whether it is set) is computed
 * from exactly as from the JSON; PostHog's unquoted text could not tell a missing key from `""`
 * nor the string "1" from the number 1.
 */

/** The JSON columns of `events` a property can be materialized from: the event's, and its person's as at the event. */
export const PROPERTIES_COLUMNS = ['properties', 'person_properties'] as const;
export type PropertiesColumn = (typeof PROPERTIES_COLUMNS)[number];

/** The materialized columns that exist, by JSON column and property key. */
export type MaterializedColumns = Readonly<Record<PropertiesColumn, ReadonlyMap<string, string>>>;

export const NO_MATERIALIZED_COLUMNS: MaterializedColumns = { properties: new Map(), person_properties: new Map() };

const PREFIX: Record<PropertiesColumn, string> = { properties: 'mat_', person_properties: 'pmat_' };

/** How much of the key the name keeps for a reader; the hash, not this, tells keys apart. */
const READABLE_LENGTH = 40;

/**
 * The column a property is materialized in. A key is any text a tenant chose: the name keeps
 * only its letters, digits and underscores (cut short) for a reader, and a hash of the whole key
 * tells apart keys that read alike (`$browser`, `_browser`), so the name is always a plain
 * identifier and the same key always gets the same one.
 */
export function materializedColumnName(column: PropertiesColumn, key: string): string {
  const readable = key.replace(/[^A-Za-z0-9_]/g, '_').slice(0, READABLE_LENGTH);
  const hash = createHash('sha256').update(`${column}\0${key}`).digest('hex').slice(0, 12);
  return `${PREFIX[column]}${readable}_${hash}`;
}

/** What the column is computed from: the property's raw JSON value, '' where the key is absent. */
export function materializedExpression(column: PropertiesColumn, key: string): string {
  return `visitParamExtractRaw(${column}, ${quoteString(key)})`;
}

const EXPRESSION = /^visitParamExtractRaw\((properties|person_properties), '((?:[^'\\]|\\.)*)'\)$/s;
const UNESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '0': '\0', a: '\x07', v: '\v' };

/** A string literal's text as ClickHouse writes it back in `system.columns`. */
function unescapeLiteral(body: string): string {
  return body.replace(/\\(x[0-9A-Fa-f]{2}|.)/gs, (_, c: string) => (c.length === 3 ? String.fromCharCode(parseInt(c.slice(1), 16)) : (UNESCAPED[c] ?? c)));
}

export interface MaterializedColumnRow {
  name: string;
  default_expression: string;
}

/**
 * The property a column of `events` materializes, from its name and expression in
 * `system.columns`; null for any other column. The name must be the one the key gets, so a column
 * someone added by hand under a materialized-looking name is never read in a property's place.
 */
export function materializedColumnOf(row: MaterializedColumnRow): { column: PropertiesColumn; key: string; name: string } | null {
  const match = EXPRESSION.exec(row.default_expression);
  if (!match) return null;
  const column = match[1] as PropertiesColumn;
  const key = unescapeLiteral(match[2]!);
  return materializedColumnName(column, key) === row.name ? { column, key, name: row.name } : null;
}

/** The columns of `events` that materialize a property, as `system.columns` lists them. */
export async function readMaterializedColumns(clickhouse: ClickHouse): Promise<MaterializedColumns> {
  const rows = await clickhouse.query<MaterializedColumnRow>(
    sql`SELECT name, default_expression FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND default_kind IN ('MATERIALIZED', 'DEFAULT')`,
  );
  const found = { properties: new Map<string, string>(), person_properties: new Map<string, string>() };
  for (const row of rows) {
    const materialized = materializedColumnOf(row);
    if (materialized) found[materialized.column].set(materialized.key, materialized.name);
  }
  return found;
}

/** How long the services read columns from a list of `events`'s columns before asking again: a new column is read within this long. */
export const MATERIALIZED_COLUMNS_REFRESH_MS = 60_000;

const lists = new WeakMap<ClickHouse, { at: number; columns: Promise<MaterializedColumns> }>();

const readOrNone = (clickhouse: ClickHouse): Promise<MaterializedColumns> => readMaterializedColumns(clickhouse).catch(() => NO_MATERIALIZED_COLUMNS);

/**
 * The materialized columns `clickhouse`'s `events` has, asked at most once a refresh interval per
 * client rather than once per query. While a newer list is asked for, queries keep the last one;
 * a failed ask gives none (queries read the JSON, as correct and slower), asked again next time.
 */
export function materializedColumnsOf(clickhouse: ClickHouse, now = Date.now(), refreshMs = MATERIALIZED_COLUMNS_REFRESH_MS): Promise<MaterializedColumns> {
  const known = lists.get(clickhouse);
  if (!known) {
    const columns = readOrNone(clickhouse);
    lists.set(clickhouse, { at: now, columns });
    return columns;
  }
  if (now - known.at >= refreshMs) {
    known.at = now;
    void readOrNone(clickhouse).then((columns) => {
      known.columns = Promise.resolve(columns);
    });
  }
  return known.columns;
}
