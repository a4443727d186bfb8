import type { CTE, Expr, Field, SelectLike, SelectQuery } from './ast.js';
import type { SampleRange } from './sample.js';
import type { TableName } from './schema.js';

/**
 * The tree the resolver hands the ClickHouse printer: a copy of the parsed query in which every
 * field says what it reads (`FieldRef`), every select says what it reads from (`SelectScope`),
 * and every use of a CTE is a copy of its body resolved where it is used. The printer looks
 * nothing up by name; it only writes SQL for what this tree says.
 */

/** A table or subquery a select reads from, and where its tenant guard goes. */
export interface Source {
  /** The name fields qualify it by: the alias, else the table's or CTE's name. */
  name: string;
  /** The alias it is printed under. */
  alias: string;
  table?: TableName;
  /** A subquery or CTE: its resolved tree and the columns it gives. */
  select?: SelectLike;
  columns?: string[];
  /** A table defined as a select over the stored ones (`sessions`): its select resolves apart from the query's CTEs. */
  view?: true;
  /** Events printed as a guarded subquery rather than guarded in the select's WHERE (see `eventsAsSubquery`). */
  wrapped: boolean;
  /** Which parts of the lazy person join the select's fields read. */
  lazy: { pdi: boolean; person: boolean };
  /** The part of the sampling key's range a `SAMPLE` on events keeps (`sample.ts`). */
  sample?: SampleRange;
  /** How the source is joined to the one before it (every source but the first). */
  join?: ResolvedJoin;
}

export type ResolvedJoin =
  | { type: string; on: Expr }
  | { type: string; using: [left: Field, right: Field][] }
  | { type: string };

/** What a field reads. */
export type FieldRef =
  | { kind: 'lambdaArg'; name: string }
  /** A column alias of the select (`select`) the field is in. */
  | { kind: 'alias'; name: string; select: SelectScope }
  /** An expression CTE, its body resolved where it is used. */
  | { kind: 'columnCte'; expr: Expr }
  /** A column of a source, and the JSON keys read inside it (a property) if any. */
  | { kind: 'column'; source: Source; column: string; keys: string[] }
  /** A column of the source's lazy person join, and the JSON keys read inside it. */
  | { kind: 'lazy'; source: Source; column: string; keys: string[] }
  /** The event's current person, through its distinct id. */
  | { kind: 'personId'; source: Source };

export type ResolvedField = Field & { ref: FieldRef };

/** A select list item: its resolved expression, the name it gives readers and its name as a result column. */
export interface ResolvedItem {
  expr: Expr;
  name: string;
  column: string;
  /** The query wrote no alias for it: its name is given only where it hides nothing (see `hidesColumn`). */
  implicit: boolean;
  /** The node errors about the item point at. */
  node: Expr;
}

export interface SelectScope {
  sources: Source[];
  items: ResolvedItem[];
  /**
   * Aliases printed under another name, HogQL's name to the printed one. Filled by the printer as
   * it prints the select list: a field naming such an alias after it reads the printed name.
   */
  printedAliases: Map<string, string>;
}

export type ResolvedSelectQuery = SelectQuery & { scope: SelectScope };

export function refOf(field: Field): FieldRef {
  const ref = (field as Partial<ResolvedField>).ref;
  if (!ref) throw new Error(`The field ${field.chain.join('.')} was printed before it was resolved`);
  return ref;
}

export function scopeOf(select: SelectQuery): SelectScope {
  const scope = (select as Partial<ResolvedSelectQuery>).scope;
  if (!scope) throw new Error('A select was printed before it was resolved');
  return scope;
}

export function cteList(select: SelectQuery): CTE[] {
  if (!select.ctes) return [];
  return Array.isArray(select.ctes) ? select.ctes : Object.values(select.ctes);
}
