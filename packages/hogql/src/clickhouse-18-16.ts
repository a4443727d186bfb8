import type { Expr, JoinExpr } from './ast.js';
import { queryError, spanOf } from './errors.js';
import type { Source } from './resolved-tree.js';
import { EVENTS_AND_JOIN_COLUMNS, TABLES } from './schema.js';
import { quoteIdentifier as q } from './sql-names.js';

/**
 * Where the SQL takes a roundabout form because ClickHouse 18.16, the oldest release Tributary runs
 * on, reads the plain one otherwise (current releases read both forms alike). The resolver and the
 * printer call these where each rule applies. The rules for a cluster's Distributed tables are in
 * `distributed-table.ts`.
 *
 * Only 18.16's bugs depend on the server (`hasLegacyBugs`, `server-features.ts`): the right-hand
 * join key compared as an expression, and the two-table bound. The other forms here run alike on
 * every release and stay on all of them, so one printing path places the tenant guard the same way
 * everywhere; ClickHouse 26 too reads a column alias before a stored column of its name
 * (`query-conformance-chdb.test.ts`), so the team_id alias refusal is needed there as well.
 */

/** 18.16 has no CTE subqueries, so each use of a CTE is a copy of its body: a bound keeps doubling CTEs from growing without end. */
export const MAX_CTE_EXPANSIONS = 64;

export function checkJoinCount(joins: JoinExpr[]): void {
  if (joins.length > 2) throw queryError('ClickHouse 18.16 joins two tables per SELECT: join the others in a subquery', spanOf(joins[2]!));
}

/** 18.16 takes one JOIN per SELECT and the lazy person join is one: joined events are a guarded subquery that makes its own. */
export const eventsAsSubquery = (first: boolean, hasJoins: boolean): boolean => !first || hasJoins;

/**
 * A column alias as printed. 18.16 reads an alias before a column of the same name, qualified or
 * not, so a column named `team_id` would stand in for the project guard beside it: refused.
 */
export function columnAlias(name: string, node: Expr): string {
  if (name === 'team_id') throw queryError('team_id cannot name a column: give it another alias', spanOf(node));
  // The printer's own columns (`__pdi_person_id`, `__person_properties`, ...) start so: an alias would stand in for one.
  if (name.startsWith('__')) throw queryError(`${name} cannot name a column: names starting with __ are reserved`, spanOf(node));
  return q(name);
}

/**
 * Whether a name the query did not write would hide a column. 18.16 reads an alias before a column
 * of its name, so such a name is given only where it hides nothing but the very column it names;
 * elsewhere a subquery names the column apart and a select around it gives the name back.
 */
export function implicitNameHides(name: string, sql: string, sources: Source[], columnSql: (source: Source, column: string) => string): boolean {
  if (!sources.some((s) => storedColumns(s).includes(name))) return false;
  const only = sources.length === 1 ? sources[0]! : undefined;
  return !(only && sql === columnSql(only, name));
}

const storedColumns = (source: Source): readonly string[] => (source.table === 'events' ? EVENTS_AND_JOIN_COLUMNS : source.table ? TABLES[source.table].asterisk : (source.columns ?? []));

/**
 * GROUP BY and ORDER BY name a column's alias rather than repeat its expression: 18.16 reads
 * `events.person_id` inside a repeated `person_id` as the alias, and fails.
 */
export class AliasOfExpression {
  private readonly aliases = new Map<string, string>();

  note(sql: string, alias: string): void {
    if (!this.aliases.has(sql)) this.aliases.set(sql, alias);
  }

  name(sql: string): string {
    return this.aliases.get(sql) ?? sql;
  }
}

/**
 * `GROUP BY 1` and `ORDER BY 2` name a column by its place, as current ClickHouse reads them
 * (18.16 groups by the constant): printed as that column's SQL. Undefined when not a position.
 */
export function columnAtPosition(e: Expr, clause: string, itemSql: string[]): string | undefined {
  if (e.node !== 'Constant' || typeof e.value !== 'number' || !Number.isInteger(e.value)) return undefined;
  const sql = itemSql[e.value - 1];
  if (sql === undefined) throw queryError(`${clause} ${e.value} names no column: the select list has ${itemSql.length}`, spanOf(e));
  return sql;
}

/** Top-level conjuncts stay top-level: 18.16 moves only those to PREWHERE, reading the large columns (properties) only for the rows the small ones (event, timestamp) let through. */
export const whereConjuncts = (e: Expr): Expr[] => (e.node === 'And' ? e.exprs.flatMap(whereConjuncts) : [e]);

/**
 * 18.16 reads a bare right-hand key column of an INNER JOIN wrongly: rows of other keys, or a
 * segfault serializing them that takes the server down. A right-hand key compared as an
 * expression (`materialize(column)`, the same value and type) is read right, in every join type.
 */
export function joinCondition(expr: Expr, right: Source, print: (e: Expr) => string): string {
  if (expr.node === 'And') return `(${expr.exprs.map((e) => joinCondition(e, right, print)).join(' AND ')})`;
  if (expr.node !== 'CompareOperation' || expr.op !== '==' || [expr.left, expr.right].some((e) => e.node === 'Constant' || e.node === 'Placeholder')) return print(expr);
  const key = (e: Expr) => {
    const sql = print(e);
    return sql.startsWith(`${q(right.alias)}.`) ? `materialize(${sql})` : sql;
  };
  return `(${key(expr.left)} = ${key(expr.right)})`;
}

/** USING is printed as ON, whose right-hand keys are compared as expressions (above): 18.16 misreads USING's too. */
export const usingCondition = (keys: [left: string, right: string][]): string => keys.map(([left, right]) => `(${left} = materialize(${right}))`).join(' AND ');

/** 18.16 takes a tuple or a subquery after IN, not an array. */
export const inList = (values: string[]): string => `(${values.join(', ') || 'NULL'})`;
