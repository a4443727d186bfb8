import { createHash } from 'node:crypto';
import { Sql, propertyText, quoteString, sql } from '@tributary/clickhouse';
import type { CTE, CompareOperation, Expr, Field, JoinExpr, OrderExpr, SelectLike, SelectQuery } from './ast.js';
import { HogQLError, queryError, type Span } from './errors.js';
import { lookupFunction } from './functions.js';
import { printHogQLExpr } from './print-hogql.js';
import { EVENT_COLUMNS, IDENTITY_SUBQUERIES, STORED_EVENT_COLUMNS, TABLES, isTableName, type TableName } from './schema.js';

export interface PrintOptions {
  /** The project every table reference is guarded to. */
  teamId: number;
  /** `{name}` placeholders' values, as PostHog's `values`. */
  values?: Record<string, unknown>;
  /** Rows a top-level query without LIMIT returns (one more is asked for, to tell whether there are more). */
  defaultLimit?: number;
  /** Rows no top-level query returns more of, whatever its LIMIT says. */
  maxLimit?: number;
}

export interface PrintedQuery {
  /** ClickHouse SQL, every stored table guarded to the project. */
  clickhouse: string;
  /** Column names as PostHog gives them: the alias, or the expression in HogQL. */
  columns: string[];
  /** Set when the query had no LIMIT of its own: rows past this many are the `hasMore` probe. */
  paginatedLimit: number | null;
  limit: number;
  offset: number;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 50_000;
/** Each use of a CTE prints its body again (18.16 has no CTE subqueries): a bound keeps doubling CTEs from growing without end. */
const MAX_CTE_EXPANSIONS = 64;
const ZERO_UUID = "toUUID('00000000-0000-0000-0000-000000000000')";

const span = (node: { start?: { offset: number }; end?: { offset: number } }): Span | null =>
  node.start ? { start: node.start.offset, end: node.end?.offset ?? node.start.offset } : null;

/** Identifiers are always backquoted, with `\` and `` ` `` escaped as ClickHouse reads them, so no name is SQL. */
export const quoteIdentifier = (name: string): string => `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``;
const q = quoteIdentifier;

/**
 * A column alias as printed. 18.16 reads an alias before a column of the same name, qualified or
 * not, so a column named `team_id` would stand in for the project guard beside it: refused.
 */
function columnAlias(name: string, node: Expr): string {
  if (name === 'team_id') throw queryError('team_id cannot name a column: give it another alias', span(node));
  // The printer's own columns (`__pdi_person_id`, `__person_properties`, ...) start so: an alias would stand in for one.
  if (name.startsWith('__')) throw queryError(`${name} cannot name a column: names starting with __ are reserved`, span(node));
  return q(name);
}

interface Source {
  /** The name fields qualify it by: the alias, else the table's or CTE's name. */
  name: string;
  /** The alias it is printed under. */
  alias: string;
  table?: TableName;
  /** A subquery or CTE: its AST and the columns it gives. */
  select?: SelectLike;
  columns?: string[];
  /** Events printed as a guarded subquery (a joined table, or the first one of a select with joins): 18.16 takes one JOIN per SELECT. */
  wrapped: boolean;
  lazy: { pdi: boolean; person: boolean };
}

interface Scope {
  sources: Source[];
  /** Explicit aliases of the select's columns; a field names one before a table's column, as in ClickHouse. */
  aliases: Map<string, Expr>;
  defining: Set<string>;
  ctes: Map<string, CTE>;
  parent: Scope | null;
  lambdaArgs: Set<string>;
  /** Aliases printed under another name (kept off a name the printer's own SQL reads): HogQL's name to the printed one. */
  printedAliases?: Map<string, string>;
}

interface Printed {
  sql: string;
  /** A JSON property read as text: compared with a number it is read as one, with a boolean as 'true'/'false'. */
  property: boolean;
}

const JOIN_TYPES = new Set(['JOIN', 'INNER JOIN', 'LEFT JOIN', 'LEFT OUTER JOIN', 'RIGHT JOIN', 'RIGHT OUTER JOIN', 'FULL JOIN', 'FULL OUTER JOIN', 'CROSS JOIN', 'ANY LEFT JOIN', 'ANY INNER JOIN', 'ANY JOIN', 'ALL LEFT JOIN', 'ALL INNER JOIN']);
const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);
const TYPE_CASTS: Record<string, string> = { int: 'toInt', integer: 'toInt', float: 'toFloat', double: 'toFloat', string: 'toString', text: 'toString', datetime: 'toDateTime', date: 'toDate', uuid: 'toUUID' };

function cteList(select: SelectQuery): CTE[] {
  if (!select.ctes) return [];
  return Array.isArray(select.ctes) ? select.ctes : Object.values(select.ctes);
}

/** The column a select item gives a subquery's readers: its alias, a field's last name, or its HogQL. */
function itemName(expr: Expr): string {
  if (expr.node === 'Alias') return expr.alias;
  if (expr.node === 'Field') return String(expr.chain.at(-1));
  return printHogQLExpr(expr);
}

/**
 * The events side of the lazy person join, unqualified: on a cluster, 18.16 sends a query over the
 * Distributed events table to each shard without the table's alias, but leaves the ON clause as
 * written, so `alias.distinct_id` there is unknown on the shard. Unqualified, the left table's
 * column is the one read on one server and on a shard alike.
 */
const LAZY_JOIN_KEY = 'distinct_id';

/**
 * A subquery used as a value, named after its own text: on a cluster, 18.16 sends the shards its
 * result as a literal, and names an unnamed one differently on the initiator, which then cannot
 * find the shards' columns (an expression over it grouped by, say). The same text gets the same
 * name, which ClickHouse allows where an expression repeats.
 */
function scalarSubquery(select: string): string {
  return `((${select}) AS ${q(`__scalar_${createHash('sha1').update(select).digest('hex').slice(0, 12)}`)})`;
}

class Printer {
  private cteExpansions = 0;
  private subqueryCount = 0;

  constructor(private readonly options: Required<Pick<PrintOptions, 'teamId'>> & PrintOptions) {}

  private guard(alias: string): string {
    return `${q(alias)}.team_id = ${this.options.teamId}`;
  }

  private lookupCte(scope: Scope | null, name: string): CTE | undefined {
    for (let s = scope; s; s = s.parent) {
      const cte = s.ctes.get(name);
      if (cte) return cte;
    }
    return undefined;
  }

  // ---- Sources: what a FROM clause names, resolved before any field is.

  private sourceOf(join: JoinExpr, scope: Scope, first: boolean, hasJoins: boolean): Source {
    if (join.table_args) throw queryError('Table functions are not allowed: query the tables events, persons, person_distinct_ids and groups', span(join));
    if (join.table_final) throw queryError('FINAL is not supported', span(join));
    if (join.sample) throw queryError('SAMPLE is not supported', span(join));
    const table = join.table;
    if (table.node === 'Field') {
      if (table.chain.length !== 1) throw queryError(`Unknown table "${table.chain.join('.')}".`, span(table));
      const name = String(table.chain[0]);
      const alias = join.alias ?? name;
      const cte = this.lookupCte(scope, name);
      if (cte) {
        if (cte.cte_type !== 'subquery') throw queryError(`${name} is an expression, not a table`, span(table));
        if (++this.cteExpansions > MAX_CTE_EXPANSIONS) throw queryError(`The query uses its CTEs more than ${MAX_CTE_EXPANSIONS} times`, span(table));
        const select = cte.expr as SelectLike;
        return { name: alias, alias, select, columns: this.columnsOf(select, scope), wrapped: false, lazy: { pdi: false, person: false } };
      }
      if (!isTableName(name)) throw queryError(`Unknown table "${name}".`, span(table));
      return { name: alias, alias, table: name, wrapped: name === 'events' && (!first || hasJoins), lazy: { pdi: false, person: false } };
    }
    if (table.node === 'SelectQuery' || table.node === 'SelectSetQuery') {
      const alias = join.alias ?? `__subquery_${this.subqueryCount++}`;
      return { name: alias, alias, select: table, columns: this.columnsOf(table, scope), wrapped: false, lazy: { pdi: false, person: false } };
    }
    throw queryError(`A ${table.node} cannot be a table`, span(table));
  }

  /** The columns a subquery gives, by name, without printing it. */
  private columnsOf(select: SelectLike, scope: Scope | null): string[] {
    if (select.node === 'SelectSetQuery') return this.columnsOf(select.initial_select_query, scope);
    const inner: Scope = { sources: [], aliases: new Map(), defining: new Set(), ctes: new Map(cteList(select).map((c) => [c.name, c])), parent: scope, lambdaArgs: new Set() };
    const names: string[] = [];
    for (const item of select.select) {
      if (item.node === 'Field' && item.chain.at(-1) === '*') {
        for (let join = select.select_from; join; join = join.next_join ?? null) {
          const table = join.table;
          if (item.chain.length === 2 && (join.alias ?? (table.node === 'Field' ? table.chain[0] : undefined)) !== item.chain[0]) continue;
          if (table.node === 'Field') {
            const name = String(table.chain[0]);
            const cte = this.lookupCte(inner, name);
            if (cte && cte.cte_type === 'subquery') names.push(...this.columnsOf(cte.expr as SelectLike, inner));
            else if (isTableName(name)) names.push(...TABLES[name].asterisk);
          } else if (table.node === 'SelectQuery' || table.node === 'SelectSetQuery') {
            names.push(...this.columnsOf(table, inner));
          }
        }
      } else {
        names.push(itemName(item));
      }
    }
    return names;
  }

  // ---- Fields.

  private field(node: Field, scope: Scope): Printed {
    const chain = node.chain.map(String);
    const [head, ...rest] = chain;
    if (head === undefined) throw queryError('An empty field', span(node));
    if (head === '*') throw queryError('* can only stand alone in a select list or in count(*)', span(node));
    if (rest.length === 0 && scope.lambdaArgs.has(head)) return { sql: q(head), property: false };
    if (rest.length === 0 && scope.aliases.has(head) && !scope.defining.has(head)) return { sql: q(scope.printedAliases?.get(head) ?? head), property: false };
    const columnCte = this.lookupCte(scope, head);
    if (rest.length === 0 && columnCte && columnCte.cte_type === 'column') {
      if (++this.cteExpansions > MAX_CTE_EXPANSIONS) throw queryError(`The query uses its CTEs more than ${MAX_CTE_EXPANSIONS} times`, span(node));
      return { sql: `(${this.expr(columnCte.expr, scope).sql})`, property: false };
    }
    const named = rest.length > 0 ? scope.sources.find((s) => s.name === head) : undefined;
    if (named) return this.fieldOf(named, rest, node);
    const candidates = scope.sources.filter((s) => this.hasField(s, head));
    if (candidates.length > 1) throw queryError(`Ambiguous field ${head}: qualify it with one of ${candidates.map((s) => s.name).join(', ')}`, span(node));
    if (candidates.length === 1) return this.fieldOf(candidates[0]!, chain, node);
    throw queryError(`Unable to resolve field: ${head}`, span(node));
  }

  private hasField(source: Source, name: string): boolean {
    if (source.table) return Object.hasOwn(TABLES[source.table].fields, name);
    return source.columns?.includes(name) ?? false;
  }

  private column(source: Source, column: string): string {
    return `${q(source.alias)}.${q(column)}`;
  }

  private lazyColumn(source: Source, column: string): string {
    return source.wrapped ? `${q(source.alias)}.${q(column)}` : `${q(`${source.alias}__lazy`)}.${q(column)}`;
  }

  private personId(source: Source): string {
    source.lazy.pdi = true;
    const current = this.lazyColumn(source, '__pdi_person_id');
    // A distinct id with no person mapping (a personless event) keeps the person stored on the row.
    return `if(${current} = ${ZERO_UUID}, ${this.column(source, 'person_id')}, ${current})`;
  }

  private fieldOf(source: Source, chain: string[], node: Field): Printed {
    const [name, ...rest] = chain as [string, ...string[]];
    if (!source.table) {
      if (!source.columns?.includes(name)) throw queryError(`Unable to resolve field: ${name} (${source.name} has ${source.columns?.join(', ')})`, span(node));
      const sql = this.column(source, name);
      return rest.length ? { sql: property(sql, rest), property: true } : { sql, property: false };
    }
    const def = Object.hasOwn(TABLES[source.table].fields, name) ? TABLES[source.table].fields[name]! : undefined;
    if (!def) throw queryError(`Unable to resolve field: ${name}`, span(node));
    switch (def.kind) {
      case 'column': {
        const sql = this.column(source, def.column);
        if (rest.length === 0) return { sql, property: false };
        if (def.json) return { sql: property(sql, rest), property: true };
        throw queryError(`Field not found: ${rest.join('.')} (${name} has no fields)`, span(node));
      }
      case 'property':
        if (rest.length) throw queryError(`Field not found: ${rest.join('.')}`, span(node));
        return { sql: property(this.column(source, 'properties'), [def.key]), property: true };
      case 'person_id':
        if (rest.length) throw queryError(`Field not found: ${rest.join('.')}`, span(node));
        return { sql: this.personId(source), property: false };
      case 'poe': {
        const [sub, ...deeper] = rest;
        if (sub === 'id' && deeper.length === 0) return { sql: this.column(source, 'person_id'), property: false };
        if (sub !== 'properties') throw queryError(`Field not found: poe.${rest.join('.')} (poe has id, properties)`, span(node));
        const sql = this.column(source, 'person_properties');
        return deeper.length ? { sql: property(sql, deeper), property: true } : { sql, property: false };
      }
      case 'lazy': {
        const [sub, ...deeper] = rest;
        if (def.join === 'pdi') {
          if (sub === 'person_id' && deeper.length === 0) return { sql: this.personId(source), property: false };
          if (sub === 'distinct_id' && deeper.length === 0) return { sql: this.column(source, 'distinct_id'), property: false };
          throw queryError(`Field not found: pdi.${rest.join('.')} (pdi has distinct_id, person_id)`, span(node));
        }
        if (sub === 'id' && deeper.length === 0) return { sql: this.personId(source), property: false };
        source.lazy.pdi = true;
        source.lazy.person = true;
        if (sub === 'properties') {
          const sql = this.lazyColumn(source, '__person_properties');
          return deeper.length ? { sql: property(sql, deeper), property: true } : { sql, property: false };
        }
        if ((sub === 'created_at' || sub === 'is_identified') && deeper.length === 0) return { sql: this.lazyColumn(source, `__person_${sub}`), property: false };
        throw queryError(`Field not found: person.${rest.join('.')} (person has id, properties, created_at, is_identified)`, span(node));
      }
    }
  }

  // ---- Expressions.

  expr(node: Expr, scope: Scope): Printed {
    const plain = (sql: string): Printed => ({ sql, property: false });
    switch (node.node) {
      case 'Constant':
        return plain(constant(node.value, node));
      case 'Field':
        return this.field(node, scope);
      case 'Placeholder':
        return plain(this.placeholder(node.expr, node));
      case 'Alias':
        throw queryError('An alias can only name a column of a select list', span(node));
      case 'And':
        return plain(`(${node.exprs.map((e) => this.expr(e, scope).sql).join(' AND ')})`);
      case 'Or':
        return plain(`(${node.exprs.map((e) => this.expr(e, scope).sql).join(' OR ')})`);
      case 'Not':
        return plain(`(NOT ${this.expr(node.expr, scope).sql})`);
      case 'CompareOperation':
        return plain(this.compare(node, scope));
      case 'ArithmeticOperation':
        if (!ARITHMETIC.has(node.op)) throw queryError(`Unknown operator ${node.op}`, span(node));
        return plain(`(${this.expr(node.left, scope).sql} ${node.op} ${this.expr(node.right, scope).sql})`);
      case 'BetweenExpr':
        return plain(`(${this.expr(node.expr, scope).sql} ${node.negated ? 'NOT ' : ''}BETWEEN ${this.expr(node.low, scope).sql} AND ${this.expr(node.high, scope).sql})`);
      case 'Tuple':
        return plain(`tuple(${node.exprs.map((e) => this.expr(e, scope).sql).join(', ')})`);
      case 'Array':
        return plain(`[${node.exprs.map((e) => this.expr(e, scope).sql).join(', ')}]`);
      case 'ArrayAccess':
        return plain(`arrayElement(${this.expr(node.array, scope).sql}, ${this.expr(node.property, scope).sql})`);
      case 'TupleAccess':
        if (!Number.isInteger(node.index) || node.index < 1) throw queryError('A tuple index starts at 1', span(node));
        return plain(`tupleElement(${this.expr(node.tuple, scope).sql}, ${node.index})`);
      case 'TypeCast': {
        const fn = TYPE_CASTS[node.type_name.toLowerCase()];
        if (!fn) throw queryError(`Unknown type ${node.type_name} for ::, use one of ${Object.keys(TYPE_CASTS).join(', ')}`, span(node));
        return this.call({ node: 'Call', name: fn, args: [node.expr], ...(node.start && { start: node.start }) }, scope);
      }
      case 'Call':
        return this.call(node, scope);
      case 'SelectQuery':
      case 'SelectSetQuery':
        return plain(scalarSubquery(this.select(node, scope, false)));
      case 'Lambda':
        throw queryError('A lambda can only be the first argument of an array function such as arrayMap', span(node));
      case 'IsDistinctFrom':
        throw queryError('IS DISTINCT FROM is not supported: compare with = and isNull()', span(node));
      default:
        throw queryError(`${node.node} is not supported`, span(node));
    }
  }

  private placeholder(expr: Expr, node: Expr): string {
    const name = expr.node === 'Field' ? expr.chain.join('.') : printHogQLExpr(expr);
    const values = this.options.values ?? {};
    if (!Object.hasOwn(values, name)) throw queryError(`Placeholder {${name}} has no value: give it in "values"`, span(node));
    return constant(values[name], node);
  }

  private compare(node: CompareOperation, scope: Scope): string {
    const op = node.op.toLowerCase();
    if (node.right.node === 'Constant' && node.right.value === null && (op === '==' || op === '!=')) {
      return `${op === '==' ? 'isNull' : 'isNotNull'}(${this.expr(node.left, scope).sql})`;
    }
    if (op === 'in' || op === 'not in') return this.membership(node.left, node.right, op === 'not in', scope);
    const left = this.coerced(node.left, node.right, scope);
    const right = this.coerced(node.right, node.left, scope);
    switch (op) {
      case '==':
        return `(${left} = ${right})`;
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=':
        return `(${left} ${op} ${right})`;
      case 'like':
        return `(${left} LIKE ${right})`;
      case 'not like':
        return `(${left} NOT LIKE ${right})`;
      case 'ilike':
        return `(lower(${left}) LIKE lower(${right}))`;
      case 'not ilike':
        return `(lower(${left}) NOT LIKE lower(${right}))`;
      case '=~':
        return `match(${left}, ${right})`;
      case '!~':
        return `(NOT match(${left}, ${right}))`;
      case '=~*':
        return `match(${left}, concat('(?i)', ${right}))`;
      case '!~*':
        return `(NOT match(${left}, concat('(?i)', ${right})))`;
      default:
        throw queryError(`The operator ${node.op} is not supported`, span(node));
    }
  }

  /** A property compared with a number is read as a number, with a boolean as the text JSON writes. */
  private coerced(side: Expr, other: Expr, scope: Scope): string {
    const otherValue = other.node === 'Constant' ? other.value : undefined;
    if (side.node === 'Constant' && typeof side.value === 'boolean' && other.node === 'Field' && this.expr(other, scope).property) return quoteString(String(side.value));
    const printed = this.expr(side, scope);
    if (printed.property && typeof otherValue === 'number') return `toFloat64OrNull(${printed.sql})`;
    return printed.sql;
  }

  /**
   * `left IN right`. ClickHouse reads a name on the right of IN (bare, qualified or in brackets) as
   * a table of its own database, unguarded: so the right side is printed only as a guarded
   * subquery or a list of constants, and anything else HogQL may mean there (a column, an alias, a
   * lambda argument, an array of expressions) as `has(array, left)`, whose arguments are values.
   */
  private membership(left: Expr, right: Expr, negated: boolean, scope: Scope): string {
    const l = this.expr(left, scope).sql;
    const printed = this.inSet(right, scope);
    if (printed.set !== undefined) return `(${l} ${negated ? 'NOT IN' : 'IN'} ${printed.set})`;
    return `(${negated ? 'NOT ' : ''}has(${printed.array}, ${l}))`;
  }

  private inSet(right: Expr, scope: Scope): { set: string; array?: never } | { array: string; set?: never } {
    if (right.node === 'SelectQuery' || right.node === 'SelectSetQuery') return { set: `(${this.select(right, scope, false)})` };
    const literal = this.literalValue(right);
    if (literal !== undefined) {
      // 18.16 takes a tuple or a subquery after IN, not an array.
      const values = Array.isArray(literal) ? literal : [literal];
      return { set: `(${values.map((v) => constant(v, right)).join(', ') || 'NULL'})` };
    }
    if (right.node === 'Tuple' || right.node === 'Array') {
      const elements = right.exprs.map((e) => this.expr(e, scope).sql);
      return right.exprs.every(isConstantShaped) ? { set: `(${elements.join(', ') || 'NULL'})` } : { array: `[${elements.join(', ')}]` };
    }
    if (right.node === 'Field' && right.chain.length === 1 && !scope.lambdaArgs.has(String(right.chain[0])) && !scope.aliases.has(String(right.chain[0]))) {
      // A CTE's name means its rows (a subquery CTE) or its value (a column CTE), as in HogQL.
      const cte = this.lookupCte(scope, String(right.chain[0]));
      if (cte?.cte_type === 'subquery') {
        if (++this.cteExpansions > MAX_CTE_EXPANSIONS) throw queryError(`The query uses its CTEs more than ${MAX_CTE_EXPANSIONS} times`, span(right));
        return { set: `(${this.select(cte.expr as SelectLike, scope, false)})` };
      }
      if (cte?.cte_type === 'column') {
        if (++this.cteExpansions > MAX_CTE_EXPANSIONS) throw queryError(`The query uses its CTEs more than ${MAX_CTE_EXPANSIONS} times`, span(right));
        return this.inSet(cte.expr, scope);
      }
      if (isTableName(String(right.chain[0])) && !scope.sources.some((s) => this.hasField(s, String(right.chain[0])))) {
        throw queryError(`IN takes a list, an array or a subquery, not the table ${String(right.chain[0])}: write (SELECT column FROM ${String(right.chain[0])})`, span(right));
      }
    }
    return { array: this.expr(right, scope).sql };
  }

  /** A constant or a placeholder's value: what can be printed as a literal. */
  private literalValue(expr: Expr): unknown {
    if (expr.node === 'Constant') return expr.value ?? null;
    if (expr.node === 'Placeholder') return this.placeholderValue(expr.expr, expr) ?? null;
    return undefined;
  }

  private placeholderValue(expr: Expr, node: Expr): unknown {
    const name = expr.node === 'Field' ? expr.chain.join('.') : printHogQLExpr(expr);
    const values = this.options.values ?? {};
    if (!Object.hasOwn(values, name)) throw queryError(`Placeholder {${name}} has no value: give it in "values"`, span(node));
    return values[name];
  }

  private call(node: Extract<Expr, { node: 'Call' }>, scope: Scope): Printed {
    const found = lookupFunction(node.name);
    if (!found) throw queryError(`Unsupported function call '${node.name}(...)'`, span(node));
    const { name, spec } = found;
    const star = node.args.length === 1 && node.args[0]!.node === 'Field' && node.args[0]!.chain.length === 1 && node.args[0]!.chain[0] === '*';
    const args = star && name === 'count' ? [] : node.args;
    if (args.length < spec.min || args.length > spec.max) {
      const expected = spec.min === spec.max ? `${spec.min}` : `${spec.min} to ${spec.max}`;
      throw queryError(`Function '${name}' expects ${expected} argument${spec.max === 1 ? '' : 's'}, found ${args.length}`, span(node));
    }
    const params = node.params ?? [];
    if (spec.params) {
      if (params.length < spec.params[0] || params.length > spec.params[1]) throw queryError(`Aggregation '${name}' takes ${spec.params[0]} to ${spec.params[1]} parameters, found ${params.length}`, span(node));
    } else if (node.params && node.params.length) throw queryError(`Function '${name}' takes no parameters`, span(node));
    if (node.distinct && !spec.aggregate) throw queryError(`DISTINCT is only for aggregations, not '${name}'`, span(node));
    if (name === 'in' || name === 'notIn') return { sql: this.membership(args[0]!, args[1]!, name === 'notIn', scope), property: false };
    const printedArgs = args.map((arg, i) => {
      if (arg.node === 'Lambda') {
        if (!spec.lambdaFirst || i !== 0) throw queryError(`A lambda can only be the first argument of an array function such as arrayMap`, span(arg));
        for (const a of arg.args) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(a)) throw queryError(`Lambda argument ${a} is not a plain name`, span(arg));
        const inner: Scope = { ...scope, lambdaArgs: new Set([...scope.lambdaArgs, ...arg.args]) };
        return `(${arg.args.map(q).join(', ')}) -> ${this.expr(arg.expr, inner).sql}`;
      }
      return this.expr(arg, scope).sql;
    });
    const printedParams = params.map((p) => this.expr(p, scope).sql);
    if (typeof spec.clickhouse === 'function') return { sql: spec.clickhouse(printedArgs, printedParams), property: false };
    const head = spec.params ? `${spec.clickhouse}(${printedParams.join(', ')})` : spec.clickhouse;
    return { sql: `${head}(${node.distinct ? 'DISTINCT ' : ''}${printedArgs.join(', ')})`, property: false };
  }

  // ---- Selects.

  select(query: SelectLike, parent: Scope | null, top: boolean): string {
    if (query.node === 'SelectSetQuery') {
      const parts = [this.select(query.initial_select_query, parent, false)];
      for (const next of query.subsequent_select_queries) {
        if (next.set_operator !== 'UNION ALL') throw queryError(`${next.set_operator} is not supported: use UNION ALL`, span(next.select_query));
        parts.push(`UNION ALL ${this.select(next.select_query, parent, false)}`);
      }
      return parts.join(' ');
    }
    return this.selectQuery(query, parent, top).sql;
  }

  selectQuery(query: SelectQuery, parent: Scope | null, top: boolean): { sql: string; columns: string[] } {
    for (const [key, message] of [
      ['qualify', 'QUALIFY is not supported'],
      ['window_exprs', 'Window functions are not supported by the ClickHouse in use'],
      ['limit_with_ties', 'LIMIT WITH TIES is not supported'],
    ] as const) {
      if (query[key]) throw queryError(message, span(query));
    }
    const scope: Scope = { sources: [], aliases: new Map(), defining: new Set(), ctes: new Map(), parent, lambdaArgs: parent?.lambdaArgs ?? new Set() };
    for (const cte of cteList(query)) scope.ctes.set(cte.name, cte);

    const joins: JoinExpr[] = [];
    for (let join = query.select_from; join; join = join.next_join ?? null) joins.push(join);
    if (joins.length > 2) throw queryError('ClickHouse 18.16 joins two tables per SELECT: join the others in a subquery', span(joins[2]!));
    joins.forEach((join, i) => {
      const source = this.sourceOf(join, scope, i === 0, joins.length > 1);
      if (scope.sources.some((s) => s.name === source.name)) throw queryError(`Two tables are named ${source.name}: give one an alias`, span(join));
      scope.sources.push(source);
    });
    for (const item of query.select) if (item.node === 'Alias') scope.aliases.set(item.alias, item.expr);
    for (const item of query.array_join_list ?? []) if (item.node === 'Alias') scope.aliases.set(item.alias, item.expr);

    const columns: string[] = [];
    const items: string[] = [];
    const taken = new Set<string>();
    // GROUP BY and ORDER BY name a column's alias rather than repeat it: 18.16 reads `events.person_id` inside a repeated `person_id` as the alias, and fails.
    const aliasOf = new Map<string, string>();
    const byAlias = (sql: string) => aliasOf.get(sql) ?? sql;
    const stored = new Set(scope.sources.flatMap((s) => (s.table === 'events' ? STORED_EVENT_COLUMNS : s.table ? TABLES[s.table].asterisk : (s.columns ?? []))));
    /** How a wrapping select reads each column back under its name, when a name had to be kept off a column here. */
    const outputs: (string | null)[] = [];
    // The lazy person join's ON reads the events' `distinct_id` unqualified (see LAZY_JOIN_KEY), which
    // 18.16 would read as a column alias of that name: such an alias is printed apart, and a select
    // around this one gives the name back, at the top level too.
    const keyAliased = query.select.some((i) => i.node === 'Alias' && i.alias === LAZY_JOIN_KEY) && scope.sources.some((s) => s.table === 'events' && !s.wrapped);
    const namedAtTop = top && !keyAliased;
    /** Each column's SQL, for GROUP BY and ORDER BY by position. */
    const itemSql: string[] = [];
    let renamed = false;
    const add = (sql: string, name: string, column: string, node: Expr, implicit = false) => {
      const alias = columnAlias(name, node);
      // 18.16 reads an alias before a column of its name, qualified or not: a name the query did not
      // write is given only where it hides nothing but the very column it names. Elsewhere a subquery
      // names the column apart and a select around it gives the name back.
      const only = scope.sources.length === 1 ? scope.sources[0]! : undefined;
      const hides = (implicit && stored.has(name) && !(only && sql === this.column(only, name))) || (!implicit && keyAliased && name === LAZY_JOIN_KEY);
      let printedAlias: string | null;
      if (hides) {
        printedAlias = namedAtTop ? null : q(`__column_${items.length}`);
        renamed ||= !namedAtTop;
        if (!implicit && printedAlias) (scope.printedAliases ??= new Map()).set(name, `__column_${items.length}`);
      } else {
        // A second column of one name is left to ClickHouse to name: two equal aliases are an error there.
        printedAlias = taken.has(name) || sql === alias ? null : alias;
      }
      items.push(printedAlias ? `${sql} AS ${printedAlias}` : sql);
      itemSql.push(sql);
      if (printedAlias && !aliasOf.has(sql)) aliasOf.set(sql, printedAlias);
      outputs.push(hides ? (printedAlias ? `${printedAlias} AS ${alias}` : null) : taken.has(name) ? null : alias);
      taken.add(name);
      columns.push(column);
    };
    for (const item of query.select) {
      if (item.node === 'Field' && item.chain.at(-1) === '*') {
        for (const [source, field] of this.asterisk(item, scope)) add(this.fieldOf(source, [field], item).sql, field, field, item, true);
      } else if (item.node === 'Alias') {
        scope.defining.add(item.alias);
        add(this.expr(item.expr, scope).sql, item.alias, item.alias, item);
        scope.defining.delete(item.alias);
      } else {
        add(this.expr(item, scope).sql, itemName(item), printHogQLExpr(item), item, true);
      }
    }
    if (items.length === 0) throw queryError('A select needs at least one column', span(query));

    const clauses: string[] = [];
    const arrayJoin = query.array_join_list?.length
      ? `${query.array_join_op === 'LEFT ARRAY JOIN' ? 'LEFT ARRAY JOIN' : 'ARRAY JOIN'} ${query.array_join_list
          .map((e) => (e.node === 'Alias' ? `${this.expr(e.expr, scope).sql} AS ${columnAlias(e.alias, e)}` : this.expr(e, scope).sql))
          .join(', ')}`
      : '';
    const conditions: string[] = [];
    const prewhere = query.prewhere ? this.expr(query.prewhere, scope).sql : null;
    // Top-level conjuncts stay top-level: 18.16 moves only those to PREWHERE, reading the large
    // columns (properties) only for the rows the small ones (event, timestamp) let through.
    const conjuncts = (e: Expr): Expr[] => (e.node === 'And' ? e.exprs.flatMap(conjuncts) : [e]);
    if (query.where) conditions.push(...conjuncts(query.where).map((e) => this.expr(e, scope).sql));
    // `GROUP BY 1` and `ORDER BY 2` name a column by its place, as current ClickHouse reads them (18.16 groups by the constant).
    const byPosition = (e: Expr, clause: string): string => {
      if (e.node !== 'Constant' || typeof e.value !== 'number' || !Number.isInteger(e.value)) return byAlias(this.expr(e, scope).sql);
      const sql = itemSql[e.value - 1];
      if (sql === undefined) throw queryError(`${clause} ${e.value} names no column: the select list has ${itemSql.length}`, span(e));
      return byAlias(sql);
    };
    if (query.group_by?.length) clauses.push(`GROUP BY ${query.group_by.map((e) => byPosition(e, 'GROUP BY')).join(', ')}`);
    if (query.having) clauses.push(`HAVING ${this.expr(query.having, scope).sql}`);
    if (query.order_by?.length) clauses.push(`ORDER BY ${query.order_by.map((o) => this.order(o, (e) => byPosition(e, 'ORDER BY'))).join(', ')}`);
    if (query.limit_by) {
      const n = this.integer(query.limit_by.n, 'LIMIT BY');
      const offset = query.limit_by.offset_value ? `${this.integer(query.limit_by.offset_value, 'LIMIT BY OFFSET')}, ` : '';
      clauses.push(`LIMIT ${offset}${n} BY ${query.limit_by.exprs.map((e) => this.expr(e, scope).sql).join(', ')}`);
    }
    if (!top) {
      if (query.limit) clauses.push(`LIMIT ${query.offset ? `${this.integer(query.offset, 'OFFSET')}, ` : ''}${this.integer(query.limit, 'LIMIT')}`);
      else if (query.offset) throw queryError('OFFSET needs a LIMIT', span(query));
    }

    // FROM is printed last: which lazy joins it needs is known only once every field was resolved.
    const from = this.from(joins, scope, conditions);
    const where = conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
    const sql = [`SELECT ${query.distinct ? 'DISTINCT ' : ''}${items.join(', ')}`, from, arrayJoin, prewhere ? `PREWHERE ${prewhere}` : ''].filter(Boolean).join(' ') + where + (clauses.length ? ` ${clauses.join(' ')}` : '');
    if (!renamed) return { sql, columns };
    if (outputs.includes(null)) throw queryError('Two columns of this subquery have one name: give one an alias with AS', span(query));
    return { sql: `SELECT ${outputs.join(', ')} FROM (${sql})`, columns };
  }

  private asterisk(item: Field, scope: Scope): [Source, string][] {
    const sources = item.chain.length === 1 ? scope.sources : scope.sources.filter((s) => s.name === item.chain[0]);
    if (item.chain.length > 2 || sources.length === 0) throw queryError(`Unable to resolve field: ${item.chain.join('.')}`, span(item));
    return sources.flatMap((s) => (s.table ? TABLES[s.table].asterisk : (s.columns ?? [])).map((f): [Source, string] => [s, f]));
  }

  private order(o: OrderExpr, print: (e: Expr) => string): string {
    if (o.with_fill) throw queryError('WITH FILL is not supported', span(o));
    return `${print(o.expr)} ${o.order === 'DESC' ? 'DESC' : 'ASC'}`;
  }

  integer(expr: Expr, clause: string): number {
    const value = expr.node === 'Placeholder' ? this.placeholderValue(expr.expr, expr) : expr.node === 'Constant' ? expr.value : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw queryError(`${clause} must be a whole number`, span(expr));
    return value;
  }

  private from(joins: JoinExpr[], scope: Scope, conditions: string[]): string {
    if (joins.length === 0) return '';
    // Constraints first: one may name a lazy field of an earlier table, which that table's SQL must then join.
    const constraints = joins.map((join, i) => (i === 0 ? '' : this.constraint(join, scope, i)));
    return joins
      .map((join, i) => {
        const table = this.tableSql(scope.sources[i]!, scope, conditions);
        if (i === 0) return `FROM ${table}`;
        return `${join.join_type ?? 'JOIN'} ${table}${constraints[i]}`;
      })
      .join(' ');
  }

  private constraint(join: JoinExpr, scope: Scope, index: number): string {
    const type = join.join_type ?? 'JOIN';
    if (!JOIN_TYPES.has(type)) throw queryError(`${type} is not supported`, span(join));
    const constraint = join.constraint;
    if (type === 'CROSS JOIN') {
      if (constraint) throw queryError('A CROSS JOIN takes no ON or USING', span(join));
      return '';
    }
    if (!constraint) throw queryError(`${type} needs ON or USING`, span(join));
    if (constraint.constraint_type === 'USING') {
      // Printed as ON, whose right-hand keys can be compared as expressions (below): 18.16 misreads USING's too.
      const names = constraint.expr.node === 'Tuple' ? constraint.expr.exprs : [constraint.expr];
      const [left, right] = [scope.sources[index - 1]!, scope.sources[index]!];
      const keys = names.map((n) => {
        if (n.node !== 'Field' || n.chain.length !== 1) throw queryError('USING takes column names', span(n));
        const name = String(n.chain[0]);
        return `(${this.fieldOf(left, [name], n).sql} = materialize(${this.fieldOf(right, [name], n).sql}))`;
      });
      return ` ON ${keys.join(' AND ')}`;
    }
    return ` ON ${this.joinCondition(constraint.expr, scope, scope.sources[index]!)}`;
  }

  /**
   * 18.16 reads a bare right-hand key column of an INNER JOIN wrongly: rows of other keys, or a
   * segfault serializing them that takes the server down. A right-hand key compared as an
   * expression (`materialize(column)`, the same value and type) is read right, in every join type.
   */
  private joinCondition(expr: Expr, scope: Scope, right: Source): string {
    if (expr.node === 'And') return `(${expr.exprs.map((e) => this.joinCondition(e, scope, right)).join(' AND ')})`;
    if (expr.node !== 'CompareOperation' || expr.op !== '==' || [expr.left, expr.right].some((e) => e.node === 'Constant' || e.node === 'Placeholder')) return this.expr(expr, scope).sql;
    const key = (e: Expr) => {
      const sql = this.expr(e, scope).sql;
      return sql.startsWith(`${q(right.alias)}.`) ? `materialize(${sql})` : sql;
    };
    return `(${key(expr.left)} = ${key(expr.right)})`;
  }

  private tableSql(source: Source, scope: Scope, conditions: string[]): string {
    if (source.select) return `(${this.select(source.select, scope, false)}) AS ${q(source.alias)}`;
    const table = source.table!;
    if (table !== 'events') return `(${IDENTITY_SUBQUERIES[table]((alias) => this.guard(alias))}) AS ${q(source.alias)}`;
    if (source.wrapped) return `(${this.eventsSubquery(source)}) AS ${q(source.alias)}`;
    // The first table of a select is guarded in its WHERE, where ClickHouse uses the key to skip other projects' parts.
    conditions.unshift(this.guard(source.alias));
    const lazy = source.lazy.pdi ? ` ANY LEFT JOIN (${this.lazySubquery(source.lazy.person)}) AS ${q(`${source.alias}__lazy`)} ON ${LAZY_JOIN_KEY} = ${q(`${source.alias}__lazy`)}.${q('distinct_id')}` : '';
    return `events AS ${q(source.alias)}${lazy}`;
  }

  /** A distinct id's current person (and its fields): the lazy join behind `person_id`, `pdi.` and `person.`. */
  private lazySubquery(person: boolean): string {
    const pdi = `(${IDENTITY_SUBQUERIES.person_distinct_ids((alias) => this.guard(alias))}) AS __pdi`;
    if (!person) return `SELECT __pdi.distinct_id AS distinct_id, __pdi.person_id AS __pdi_person_id FROM ${pdi}`;
    return `SELECT __pdi.distinct_id AS distinct_id, __pdi.person_id AS __pdi_person_id, __p.properties AS __person_properties, __p.created_at AS __person_created_at, __p.is_identified AS __person_is_identified FROM ${pdi} ANY LEFT JOIN (${IDENTITY_SUBQUERIES.persons((alias) => this.guard(alias))}) AS __p ON __pdi.person_id = __p.id`;
  }

  private eventsSubquery(source: Source): string {
    const columns = EVENT_COLUMNS.map((c) => `__e.${q(c)} AS ${q(c)}`);
    if (!source.lazy.pdi) return `SELECT ${columns.join(', ')} FROM events AS __e WHERE ${this.guard('__e')}`;
    const lazy = ['__pdi_person_id', ...(source.lazy.person ? ['__person_properties', '__person_created_at', '__person_is_identified'] : [])];
    return `SELECT ${[...columns, ...lazy.map((c) => `__lazy.${q(c)} AS ${q(c)}`)].join(', ')} FROM events AS __e ANY LEFT JOIN (${this.lazySubquery(source.lazy.person)}) AS __lazy ON ${LAZY_JOIN_KEY} = __lazy.distinct_id WHERE ${this.guard('__e')}`;
  }
}

/** An expression of constants alone (no name, no subquery): ClickHouse computes it as a value wherever it stands. */
function isConstantShaped(expr: Expr): boolean {
  switch (expr.node) {
    case 'Constant':
    case 'Placeholder':
      return true;
    case 'Tuple':
    case 'Array':
      return expr.exprs.every(isConstantShaped);
    case 'Call':
      return expr.args.every(isConstantShaped) && (expr.params ?? []).every(isConstantShaped);
    default:
      return false;
  }
}

/**
 * A JSON property as HogQL reads it: text, NULL when absent, empty or JSON null; nested keys read
 * the value at each level in turn. `visitParam*` are what both 18.16 and current releases have.
 */
function property(column: string, keys: string[]): string {
  let json = Sql.trusted(column);
  for (const key of keys.slice(0, -1)) json = sql`visitParamExtractRaw(${json}, ${key})`;
  return `nullIf(nullIf(${propertyText(json, keys.at(-1)!).text}, ''), 'null')`;
}

function constant(value: unknown, node: Expr): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string' && (node as { value_type?: string }).value_type === 'number') {
    // The parser gives a number a double cannot hold (2^64, 1e999) as its text: an integer's digits are still a number.
    if (/^-?\d+$/.test(value)) return value;
    throw queryError('A number is too large to compute with', span(node));
  }
  if (typeof value === 'string') return quoteString(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw queryError('A number is too large to compute with', span(node));
    return Number.isInteger(value) ? value.toFixed(0) : String(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => constant(v, node)).join(', ')}]`;
  throw queryError(`A value of type ${typeof value} cannot be used in a query`, span(node));
}

/**
 * Prints a parsed HogQL query as ClickHouse SQL for one project. Every stored table is read only
 * through a `team_id` guard this function adds, in every subquery, join, CTE and union part,
 * so no input can reach another project's rows; everything else is an allow-list.
 */
export function printQuery(query: SelectLike, options: PrintOptions): PrintedQuery {
  const printer = new Printer(options);
  const defaultLimit = Math.min(options.defaultLimit ?? DEFAULT_LIMIT, options.maxLimit ?? MAX_LIMIT);
  const maxLimit = options.maxLimit ?? MAX_LIMIT;
  try {
    const top = query.node === 'SelectQuery' ? query : null;
    const ownLimit = top?.limit ? printer.integer(top.limit, 'LIMIT') : null;
    const offset = top?.offset ? printer.integer(top.offset, 'OFFSET') : 0;
    const limit = ownLimit === null ? defaultLimit : Math.min(ownLimit, maxLimit);
    // A query without a LIMIT of its own asks for one row more, to tell whether there are more.
    const fetched = ownLimit === null ? limit + 1 : limit;
    let body: string;
    let columns: string[];
    if (top) {
      ({ sql: body, columns } = printer.selectQuery(top, null, true));
    } else {
      body = `SELECT * FROM (${printer.select(query, null, false)})`;
      columns = new Printer(options).selectQuery(firstSelect(query), null, true).columns;
    }
    return { clickhouse: `${body} LIMIT ${offset ? `${offset}, ` : ''}${fetched}`, columns, paginatedLimit: ownLimit === null ? limit : null, limit, offset };
  } catch (error) {
    if (error instanceof RangeError) throw new HogQLError('The query nests too deeply to print', 'hogql_query_error');
    throw error;
  }
}

function firstSelect(query: SelectLike): SelectQuery {
  return query.node === 'SelectQuery' ? query : firstSelect(query.initial_select_query);
}
