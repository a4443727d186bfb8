import { NO_MATERIALIZED_COLUMNS, PROPERTIES_COLUMNS, Sql, quoteString, rawJsonText, sql, type MaterializedColumns, type PropertiesColumn } from '@tributary/clickhouse';
import type { CompareOperation, Expr, Field, OrderExpr, SelectLike, SelectQuery, WindowExpr, WindowFrameExpr, WindowFunction } from './ast.js';
import { AliasOfExpression, columnAlias, columnAtPosition, implicitNameHides, inList, joinCondition, usingCondition, whereConjuncts } from './clickhouse-18-16.js';
import { LAZY_JOIN_KEY, aliasesLazyJoinKey, scalarSubquery } from './distributed-table.js';
import { queryError, spanOf as span } from './errors.js';
import { lookupFunction, lookupWindowFunction } from './functions.js';
import { printsAsSet } from './in-set.js';
import { isPersonSetCondition } from './person-condition.js';
import { printHogQLExpr } from './print-hogql.js';
import { sampleCondition } from './sample.js';
import { refOf, scopeOf, type FieldRef, type Source } from './resolved-tree.js';
import { DEFAULT_PERSONS_ON_EVENTS_MODE, EVENTS_SUBQUERY_COLUMNS, IDENTITY_SUBQUERIES, latestDistinctIds, latestPersons, type PersonsOnEventsMode } from './schema.js';
import { hasLegacyBugs, type ClickHouseServer } from './server-features.js';
import { quoteIdentifier as q } from './sql-names.js';

/**
 * The second stage of printing: writes a resolved tree (`resolver.ts`) as ClickHouse SQL for one
 * project, adding the `team_id` guard to every stored table it reads. It looks up no name: what
 * each field and select reads was settled by the resolver. Where the SQL takes a roundabout form
 * for ClickHouse 18.16 or a cluster, it calls `clickhouse-18-16.ts` and `distributed-table.ts`.
 */

const ZERO_UUID = "toUUID('00000000-0000-0000-0000-000000000000')";

/** The person's columns the lazy join gives whole, by their name there, and the persons subquery's column each is. */
const PERSON_COLUMN_OF = { __person_properties: 'properties', __person_created_at: 'created_at', __person_is_identified: 'is_identified' } as const;
const PERSON_JOIN_COLUMNS = Object.keys(PERSON_COLUMN_OF) as (keyof typeof PERSON_COLUMN_OF)[];
/** A person's column the lazy join gives whole, as the persons subquery takes it. */
const wholePersonColumn = (column: keyof typeof PERSON_COLUMN_OF) => ({ alias: column, sql: `p.${PERSON_COLUMN_OF[column]}` });

interface Printed {
  sql: string;
  /** A JSON property read as text: compared with a number it is read as one, with a boolean as 'true'/'false'. */
  property: boolean;
}

const plain = (sql: string): Printed => ({ sql, property: false });

const personPropertyColumn = (i: number) => `__person_property_${i}`;
/** A person property read through the lazy join (`person.properties.KEY...`). */
const isPersonPropertyRef = (ref: FieldRef): ref is Extract<FieldRef, { kind: 'lazy' }> => ref.kind === 'lazy' && ref.column === '__person_properties' && ref.keys.length > 0;
const isPersonPropertyOf = (field: Field, source: Source): boolean => {
  const ref = refOf(field);
  return isPersonPropertyRef(ref) && ref.source === source;
};
/** The persons' select's values of the keys read: each taken from each version's JSON before the latest is picked, so that no whole JSON is kept per person. */
const personPropertyValues = (keys: string[]) => keys.map((key, i) => ({ alias: personPropertyColumn(i), sql: sql`visitParamExtractRaw(p.properties, ${key})`.text }));
/** A key's place in the keys read so far, added if new. */
function keyIndex(keys: string[], key: string): number {
  if (!keys.includes(key)) keys.push(key);
  return keys.indexOf(key);
}
/** Functions that give NULL for values that are not: what does not parse, `nullIf`'s match. */
const NULL_FROM_VALUES = new Set(['nullif', 'toint', 'tofloat', 'toint64ornull', 'tofloat64ornull', 'parsedatetimebesteffortornull']);

/**
 * Whether a value may be NULL: a property (absent), a NULL, a column of a subquery or an alias
 * (not looked into), what `NULL_FROM_VALUES` gives, or anything computed from one of these;
 * not a stored table's own column, nor what isNull, isNotNull or a default of ifNull gives.
 */
function mayBeNull(expr: Expr): boolean {
  switch (expr.node) {
    case 'Constant':
      return expr.value === null;
    case 'Tuple':
    case 'Array':
      return false;
    case 'Field': {
      const ref = refOf(expr);
      if (ref.kind === 'column') return ref.keys.length > 0 || ref.source.table === undefined;
      return !((ref.kind === 'lazy' && ref.keys.length === 0) || ref.kind === 'personId');
    }
    case 'Call': {
      const name = expr.name.toLowerCase();
      if (NULL_FROM_VALUES.has(name)) return true;
      if (name === 'isnull' || name === 'isnotnull') return false;
      if (name === 'ifnull' || name === 'coalesce') return expr.args.every(mayBeNull);
      return expr.args.some(mayBeNull);
    }
    case 'And':
    case 'Or':
      return expr.exprs.some(mayBeNull);
    case 'Not':
      return mayBeNull(expr.expr);
    case 'CompareOperation':
    case 'ArithmeticOperation':
      return mayBeNull(expr.left) || mayBeNull(expr.right);
    default:
      return true;
  }
}

const readsProperty = (ref: FieldRef): boolean => (ref.kind === 'column' || ref.kind === 'lazy') && ref.keys.length > 0;

/** A field that reads a stored column, of a source or of its lazy join. */
type StoredRead = Extract<FieldRef, { kind: 'column' | 'lazy' }>;

const isPropertiesColumn = (column: string): column is PropertiesColumn => (PROPERTIES_COLUMNS as readonly string[]).includes(column);

/**
 * A JSON property as HogQL reads it, from its top-level key's raw JSON value: text, NULL when
 * absent, empty or JSON null; nested keys read the value at each level in turn. `visitParam*` are
 * what both 18.16 and current releases have.
 */
function property(raw: Sql, keys: string[]): string {
  let value = raw;
  for (const key of keys.slice(1)) value = sql`visitParamExtractRaw(${value}, ${key})`;
  return `nullIf(nullIf(${rawJsonText(value).text}, ''), 'null')`;
}

/** A property an events query read, for the counts that pick which properties get columns of their own. */
export interface PropertyRead {
  column: PropertiesColumn;
  key: string;
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

export class ClickHousePrinter {
  constructor(
    private readonly teamId: number,
    /** `{name}` placeholders' values. */
    private readonly values: Record<string, unknown>,
    /** The server the SQL is for: its bugs' workarounds (`clickhouse-18-16.ts`) only where it has them. */
    private readonly server: ClickHouseServer,
    /** The properties `events` has columns of their own for: read there instead of from the JSON. */
    private readonly materialized: MaterializedColumns = NO_MATERIALIZED_COLUMNS,
    /** Where an event's person comes from (PostHog's `personsOnEventsMode` modifier). */
    private readonly personsOnEvents: PersonsOnEventsMode = DEFAULT_PERSONS_ON_EVENTS_MODE,
  ) {
    this.materializedNames = new Set([...materialized.properties.values(), ...materialized.person_properties.values()]);
  }

  private readonly materializedNames: Set<string>;
  /** Every top-level property of events' JSON columns the query reads, once each. */
  private readonly reads = new Map<string, PropertyRead>();
  /** The materialized columns read through an events source printed as a subquery, which must give them. */
  private readonly wrappedColumns = new Map<Source, Set<string>>();
  /** What an events source's lazy join must give of its person, read so far: whole columns, and the keys of the properties read. */
  private readonly personReads = new Map<Source, { columns: Set<string>; keys: string[] }>();
  /** The events sources a printed field reads through the lazy join: the others need no join. */
  private readonly lazyJoined = new Set<Source>();
  /** While a set of distinct ids by person is printed (`personSet`): its source, and the keys its persons' select reads. */
  private personSetReads: { source: Source; keys: string[] } | null = null;
  /** How many lambdas the printed expression is in: 18.16 takes no Nullable condition there (`arrayExists`). */
  private lambdaDepth = 0;

  propertyReads(): PropertyRead[] {
    return [...this.reads.values()];
  }

  private guard(alias: string): string {
    return `${q(alias)}.team_id = ${this.teamId}`;
  }

  // ---- Fields.

  private column(source: Source, column: string): string {
    return `${q(source.alias)}.${q(column)}`;
  }

  private lazyColumn(source: Source, column: string): string {
    this.lazyJoined.add(source);
    return source.wrapped ? `${q(source.alias)}.${q(column)}` : `${q(`${source.alias}__lazy`)}.${q(column)}`;
  }

  /**
   * The raw JSON value of a top-level key of an events JSON column: its materialized column where
   * `events` has one, which holds exactly what `visitParamExtractRaw` reads from the JSON.
   */
  private rawValue(read: StoredRead, key: string, json: string): Sql {
    if (read.kind === 'lazy' && !read.source.wrapped) return Sql.trusted(this.lazyColumn(read.source, this.personKeyColumn(read.source, key)));
    return Sql.trusted(this.materializedColumn(read.source, read.column, key) ?? sql`visitParamExtractRaw(${Sql.trusted(json)}, ${key})`.text);
  }

  private personReadsOf(source: Source): { columns: Set<string>; keys: string[] } {
    const reads = this.personReads.get(source) ?? { columns: new Set<string>(), keys: [] };
    this.personReads.set(source, reads);
    return reads;
  }

  /**
   * The lazy join's column of one person property's raw JSON value. The join takes it from the
   * person's JSON once per distinct id, so the events' rows carry (and hash) that value alone,
   * not every person's whole JSON, and nothing parses the JSON again for every event.
   */
  private personKeyColumn(source: Source, key: string): string {
    return personPropertyColumn(keyIndex(this.personReadsOf(source).keys, key));
  }

  private materializedColumn(source: Source, column: string, key: string): string | null {
    if (source.table !== 'events' || !isPropertiesColumn(column)) return null;
    this.reads.set(`${column}\0${key}`, { column, key });
    const name = this.materialized[column].get(key);
    if (name === undefined) return null;
    if (source.wrapped) {
      const columns = this.wrappedColumns.get(source) ?? new Set();
      this.wrappedColumns.set(source, columns.add(name));
    }
    return this.column(source, name);
  }

  /** `visitParamExtractRaw(properties, 'key')` and `visitParamHas(...)` (property filters' forms) over an events JSON column, as its materialized column. */
  private materializedCall(name: string, args: Expr[]): string | null {
    if ((name !== 'visitParamExtractRaw' && name !== 'visitParamHas') || args.length !== 2) return null;
    const [json, key] = args as [Expr, Expr];
    if (json.node !== 'Field' || key.node !== 'Constant' || typeof key.value !== 'string') return null;
    const ref = refOf(json);
    if (ref.kind !== 'column' || ref.keys.length > 0) return null;
    const column = this.materializedColumn(ref.source, ref.column, key.value);
    if (column === null) return null;
    // The raw value is '' exactly where the key is absent: present, it is at least `""` or `null`.
    return name === 'visitParamHas' ? `(${column} != '')` : column;
  }

  /** A column alias as printed: one named as a materialized column would stand in for it (see `columnAlias`). */
  private columnAlias(name: string, node: Expr): string {
    if (this.materializedNames.has(name)) throw queryError(`${name} cannot name a column: it is the name of a materialized property column`, span(node));
    return columnAlias(name, node);
  }

  private field(node: Field): Printed {
    const ref = refOf(node);
    const keyed = (read: StoredRead, json: string): Printed => (read.keys.length ? { sql: property(this.rawValue(read, read.keys[0]!, json), read.keys), property: true } : plain(json));
    switch (ref.kind) {
      case 'lambdaArg':
        return plain(q(ref.name));
      case 'alias':
        return plain(q(ref.select.printedAliases.get(ref.name) ?? ref.name));
      case 'columnCte':
        return plain(`(${this.expr(ref.expr).sql})`);
      case 'column':
        return keyed(ref, this.column(ref.source, ref.column));
      case 'lazy':
        if (this.personSetReads?.source === ref.source && isPersonPropertyRef(ref)) return { sql: property(Sql.trusted(this.personSetColumn(ref.keys[0]!)), ref.keys), property: true };
        if (ref.keys.length === 0) this.personReadsOf(ref.source).columns.add(ref.column);
        return keyed(ref, this.lazyColumn(ref.source, ref.column));
      case 'personId': {
        const current = this.lazyColumn(ref.source, '__pdi_person_id');
        // A distinct id with no person mapping (a personless event) keeps the person stored on the row.
        return plain(`if(${current} = ${ZERO_UUID}, ${this.column(ref.source, 'person_id')}, ${current})`);
      }
    }
  }

  // ---- Expressions.

  private expr(node: Expr): Printed {
    switch (node.node) {
      case 'Constant':
        return plain(constant(node.value, node));
      case 'Field':
        return this.field(node);
      case 'Placeholder':
        return plain(constant(this.placeholderValue(node.expr, node), node));
      case 'And':
        return plain(`(${node.exprs.map((e) => this.expr(e).sql).join(' AND ')})`);
      case 'Or':
        return plain(`(${node.exprs.map((e) => this.expr(e).sql).join(' OR ')})`);
      case 'Not':
        return plain(`(NOT ${this.expr(node.expr).sql})`);
      case 'CompareOperation':
        return plain(this.compare(node));
      case 'ArithmeticOperation':
        return plain(`(${this.expr(node.left).sql} ${node.op} ${this.expr(node.right).sql})`);
      case 'BetweenExpr':
        return plain(`(${this.expr(node.expr).sql} ${node.negated ? 'NOT ' : ''}BETWEEN ${this.expr(node.low).sql} AND ${this.expr(node.high).sql})`);
      case 'Tuple':
        return plain(`tuple(${node.exprs.map((e) => this.expr(e).sql).join(', ')})`);
      case 'Array':
        return plain(`[${node.exprs.map((e) => this.expr(e).sql).join(', ')}]`);
      case 'ArrayAccess':
        return plain(`arrayElement(${this.expr(node.array).sql}, ${this.expr(node.property).sql})`);
      case 'TupleAccess':
        return plain(`tupleElement(${this.expr(node.tuple).sql}, ${node.index})`);
      case 'Call':
        return plain(this.call(node));
      case 'WindowFunction':
        return plain(this.windowFunction(node));
      case 'SelectQuery':
      case 'SelectSetQuery':
        return plain(scalarSubquery(this.select(node, false)));
      default:
        throw queryError(`${node.node} is not supported`, span(node));
    }
  }

  private compare(node: CompareOperation): string {
    const op = node.op.toLowerCase();
    if (node.right.node === 'Constant' && node.right.value === null && (op === '==' || op === '!=')) {
      return `${op === '==' ? 'isNull' : 'isNotNull'}(${this.expr(node.left).sql})`;
    }
    if (op === 'in' || op === 'not in') return this.membership(node.left, node.right, op === 'not in');
    const left = this.coerced(node.left, node.right);
    const right = this.coerced(node.right, node.left);
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
  private coerced(side: Expr, other: Expr): string {
    const otherValue = other.node === 'Constant' ? other.value : undefined;
    if (side.node === 'Constant' && typeof side.value === 'boolean' && other.node === 'Field' && readsProperty(refOf(other))) return quoteString(String(side.value));
    const printed = this.expr(side);
    if (printed.property && typeof otherValue === 'number') return `toFloat64OrNull(${printed.sql})`;
    return printed.sql;
  }

  /**
   * `left IN right`. ClickHouse reads a name on the right of IN (bare, qualified or in brackets) as
   * a table of its own database, unguarded: so the right side is printed only as a guarded
   * subquery or a list of constants, and anything else HogQL may mean there (a column, an alias, a
   * lambda argument, an array of expressions) as `has(array, left)`, whose arguments are values.
   */
  private membership(left: Expr, right: Expr, negated: boolean): string {
    const l = this.expr(left).sql;
    const printed = this.inSet(right);
    if (printed.set !== undefined) {
      const test = `(${l} ${negated ? 'NOT IN' : 'IN'} ${printed.set})`;
      // 18.16 answers 0 for NULL IN a set and 1 for NOT IN; current releases answer NULL, and so does this on 18.16
      // (but in a lambda, whose condition 18.16 needs as UInt8).
      return hasLegacyBugs(this.server) && this.lambdaDepth === 0 && mayBeNull(left) ? `if(isNull(${l}), NULL, ${test})` : test;
    }
    return `(${negated ? 'NOT ' : ''}has(${printed.array}, ${l}))`;
  }

  private lambdaBody(body: Expr): string {
    this.lambdaDepth++;
    try {
      return this.expr(body).sql;
    } finally {
      this.lambdaDepth--;
    }
  }

  private inSet(right: Expr): { set: string; array?: never } | { array: string; set?: never } {
    if (right.node === 'SelectQuery' || right.node === 'SelectSetQuery') return { set: `(${this.select(right, false)})` };
    const literal = this.literalValue(right);
    if (literal !== undefined) return { set: inList((Array.isArray(literal) ? literal : [literal]).map((v) => constant(v, right))) };
    if (right.node === 'Tuple' || right.node === 'Array') {
      const elements = right.exprs.map((e) => this.expr(e).sql);
      return printsAsSet(right) ? { set: inList(elements) } : { array: `[${elements.join(', ')}]` };
    }
    return { array: this.expr(right).sql };
  }

  /** A constant or a placeholder's value: what can be printed as a literal. */
  private literalValue(expr: Expr): unknown {
    if (expr.node === 'Constant') return expr.value ?? null;
    if (expr.node === 'Placeholder') return this.placeholderValue(expr.expr, expr) ?? null;
    return undefined;
  }

  private placeholderValue(expr: Expr, node: Expr): unknown {
    const name = expr.node === 'Field' ? expr.chain.join('.') : printHogQLExpr(expr);
    if (!Object.hasOwn(this.values, name)) throw queryError(`Placeholder {${name}} has no value: give it in "values"`, span(node));
    return this.values[name];
  }

  integer(expr: Expr, clause: string): number {
    const value = expr.node === 'Placeholder' ? this.placeholderValue(expr.expr, expr) : expr.node === 'Constant' ? expr.value : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw queryError(`${clause} must be a whole number`, span(expr));
    return value;
  }

  /** A call the resolver checked: its name is the function's own, its arity and parameters allowed. */
  private call(node: Extract<Expr, { node: 'Call' }>): string {
    const { name, spec } = lookupFunction(node.name)!;
    const args = node.args;
    if (name === 'in' || name === 'notIn') return this.membership(args[0]!, args[1]!, name === 'notIn');
    const materialized = this.materializedCall(name, args);
    if (materialized !== null) return materialized;
    const printedArgs = args.map((arg) => (arg.node === 'Lambda' ? `(${arg.args.map(q).join(', ')}) -> ${this.lambdaBody(arg.expr)}` : this.expr(arg).sql));
    const printedParams = (node.params ?? []).map((p) => this.expr(p).sql);
    if (typeof spec.clickhouse === 'function') return spec.clickhouse(printedArgs, printedParams);
    const head = spec.params ? `${spec.clickhouse}(${printedParams.join(', ')})` : spec.clickhouse;
    return `${head}(${node.distinct ? 'DISTINCT ' : ''}${printedArgs.join(', ')})`;
  }

  /** A function over a window the resolver checked: the server has window functions, the name is allowed, a named window exists. */
  private windowFunction(node: WindowFunction): string {
    const { name, spec } = lookupWindowFunction(node.name)!;
    const params = (node.args ?? []).map((p) => this.expr(p).sql);
    const head = spec.params ? `${name}(${params.join(', ')})` : name;
    const over = node.over_expr ? `(${this.window(node.over_expr)})` : q(node.over_identifier!);
    return `${head}(${(node.exprs ?? []).map((e) => this.expr(e).sql).join(', ')}) OVER ${over}`;
  }

  private window(w: WindowExpr): string {
    const frameEnd = (end: WindowFrameExpr) => (end.frame_type === 'CURRENT ROW' ? 'CURRENT ROW' : `${end.frame_value ?? 'UNBOUNDED'} ${end.frame_type}`);
    const parts: string[] = [];
    if (w.partition_by?.length) parts.push(`PARTITION BY ${w.partition_by.map((e) => this.expr(e).sql).join(', ')}`);
    if (w.order_by?.length) parts.push(`ORDER BY ${w.order_by.map((o) => this.order(o, (e) => this.expr(e).sql)).join(', ')}`);
    if (w.frame_start) {
      const method = w.frame_method ?? 'RANGE';
      parts.push(w.frame_end ? `${method} BETWEEN ${frameEnd(w.frame_start)} AND ${frameEnd(w.frame_end)}` : `${method} ${frameEnd(w.frame_start)}`);
    }
    return parts.join(' ');
  }

  // ---- Selects.

  select(query: SelectLike, top: boolean): string {
    if (query.node === 'SelectSetQuery') {
      const parts = [this.select(query.initial_select_query, false)];
      for (const next of query.subsequent_select_queries) parts.push(`UNION ALL ${this.select(next.select_query, false)}`);
      return parts.join(' ');
    }
    return this.selectQuery(query, top).sql;
  }

  selectQuery(query: SelectQuery, top: boolean): { sql: string; columns: string[] } {
    const scope = scopeOf(query);
    const { sources } = scope;
    const columns: string[] = [];
    const items: string[] = [];
    const taken = new Set<string>();
    const aliasOf = new AliasOfExpression();
    /** How a wrapping select reads each column back under its name, when a name had to be kept off a column here. */
    const outputs: (string | null)[] = [];
    const keyAliased = aliasesLazyJoinKey(scope.items, sources);
    const namedAtTop = top && !keyAliased;
    /** Each column's SQL, for GROUP BY and ORDER BY by position. */
    const itemSql: string[] = [];
    let renamed = false;
    for (const { expr, name, column, implicit, node } of scope.items) {
      const sql = this.expr(expr).sql;
      const alias = this.columnAlias(name, node);
      const hides = (implicit && implicitNameHides(name, sql, sources, (s, c) => this.column(s, c))) || (!implicit && keyAliased && name === LAZY_JOIN_KEY);
      let printedAlias: string | null;
      if (hides) {
        printedAlias = namedAtTop ? null : q(`__column_${items.length}`);
        renamed ||= !namedAtTop;
        if (!implicit && printedAlias) scope.printedAliases.set(name, `__column_${items.length}`);
      } else {
        // A second column of one name is left to ClickHouse to name: two equal aliases are an error there.
        printedAlias = taken.has(name) || sql === alias ? null : alias;
      }
      items.push(printedAlias ? `${sql} AS ${printedAlias}` : sql);
      itemSql.push(sql);
      if (printedAlias) aliasOf.note(sql, printedAlias);
      outputs.push(hides ? (printedAlias ? `${printedAlias} AS ${alias}` : null) : taken.has(name) ? null : alias);
      taken.add(name);
      columns.push(column);
    }

    const clauses: string[] = [];
    const arrayJoin = query.array_join_list?.length
      ? `${query.array_join_op === 'LEFT ARRAY JOIN' ? 'LEFT ARRAY JOIN' : 'ARRAY JOIN'} ${query.array_join_list
          .map((e) => (e.node === 'Alias' ? `${this.expr(e.expr).sql} AS ${this.columnAlias(e.alias, e)}` : this.expr(e).sql))
          .join(', ')}`
      : '';
    const conditions: string[] = [];
    const prewhere = query.prewhere ? this.expr(query.prewhere).sql : null;
    if (query.where) conditions.push(...this.whereConditions(whereConjuncts(query.where), sources[0]));
    const byPosition = (e: Expr, clause: string): string => aliasOf.name(columnAtPosition(e, clause, itemSql) ?? this.expr(e).sql);
    if (query.group_by?.length) clauses.push(`GROUP BY ${query.group_by.map((e) => byPosition(e, 'GROUP BY')).join(', ')}`);
    if (query.having) clauses.push(`HAVING ${this.expr(query.having).sql}`);
    const windows = Object.entries(query.window_exprs ?? {});
    if (windows.length) clauses.push(`WINDOW ${windows.map(([name, w]) => `${q(name)} AS (${this.window(w)})`).join(', ')}`);
    if (query.order_by?.length) clauses.push(`ORDER BY ${query.order_by.map((o) => this.order(o, (e) => byPosition(e, 'ORDER BY'))).join(', ')}`);
    if (query.limit_by) {
      const n = this.integer(query.limit_by.n, 'LIMIT BY');
      const offset = query.limit_by.offset_value ? `${this.integer(query.limit_by.offset_value, 'LIMIT BY OFFSET')}, ` : '';
      clauses.push(`LIMIT ${offset}${n} BY ${query.limit_by.exprs.map((e) => this.expr(e).sql).join(', ')}`);
    }
    if (!top) {
      if (query.limit) clauses.push(`LIMIT ${query.offset ? `${this.integer(query.offset, 'OFFSET')}, ` : ''}${this.integer(query.limit, 'LIMIT')}`);
      else if (query.offset) throw queryError('OFFSET needs a LIMIT', span(query));
    }

    const from = this.from(sources, conditions);
    const where = conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
    const sql = [`SELECT ${query.distinct ? 'DISTINCT ' : ''}${items.join(', ')}`, from, arrayJoin, prewhere ? `PREWHERE ${prewhere}` : ''].filter(Boolean).join(' ') + where + (clauses.length ? ` ${clauses.join(' ')}` : '');
    if (!renamed) return { sql, columns };
    if (outputs.includes(null)) throw queryError('Two columns of this subquery have one name: give one an alias with AS', span(query));
    return { sql: `SELECT ${outputs.join(', ')} FROM (${sql})`, columns };
  }

  /**
   * A WHERE's conditions, those of them that only the first source's person can meet as one set
   * of distinct ids where the first of them stood: reading the identity tables once, rather than
   * joining every event to its person's properties.
   */
  private whereConditions(conjuncts: Expr[], first: Source | undefined): string[] {
    const byPerson = first?.table === 'events' && !first.wrapped ? conjuncts.filter((e) => isPersonSetCondition(e, (f) => isPersonPropertyOf(f, first))) : [];
    if (byPerson.length === 0) return conjuncts.map((e) => this.expr(e).sql);
    return conjuncts.flatMap((e) => (e === byPerson[0] ? [this.personSet(first!, byPerson)] : byPerson.includes(e) ? [] : [this.expr(e).sql]));
  }

  /** `distinct_id IN` the ids whose current person meets `conditions`, read over each person's latest properties. */
  private personSet(source: Source, conditions: Expr[]): string {
    // A condition may hold a subquery with a person set of its own: the outer set's reads resume after it.
    const outer = this.personSetReads;
    const reads = { source, keys: [] as string[] };
    this.personSetReads = reads;
    const where = conditions.map((e) => this.expr(e).sql).join(' AND ');
    this.personSetReads = outer;
    const { keys } = reads;
    const guard = (alias: string) => this.guard(alias);
    const persons = latestPersons(guard, personPropertyValues(keys));
    const ids = `SELECT __pdi.distinct_id FROM (${IDENTITY_SUBQUERIES.person_distinct_ids(guard)}) AS __pdi WHERE __pdi.person_id IN (SELECT __p.id FROM (${persons}) AS __p WHERE ${where})`;
    return `(${this.column(source, 'distinct_id')} IN (${ids}))`;
  }

  private personSetColumn(key: string): string {
    return `__p.${personPropertyColumn(keyIndex(this.personSetReads!.keys, key))}`;
  }

  private order(o: OrderExpr, print: (e: Expr) => string): string {
    return `${print(o.expr)} ${o.order === 'DESC' ? 'DESC' : 'ASC'}`;
  }

  private from(sources: Source[], conditions: string[]): string {
    // Constraints before tables: a materialized property a constraint reads is a column its wrapped events subquery must carry.
    const constraints = sources.map((source, i) => (i === 0 ? '' : this.constraint(source)));
    return sources
      .map((source, i) => {
        const table = this.tableSql(source, conditions);
        if (i === 0) return `FROM ${table}`;
        return `${source.join!.type} ${table}${constraints[i]}`;
      })
      .join(' ');
  }

  private constraint(right: Source): string {
    const join = right.join!;
    const legacy = hasLegacyBugs(this.server);
    if ('on' in join) return ` ON ${legacy ? joinCondition(join.on, right, (e) => this.expr(e).sql) : this.expr(join.on).sql}`;
    if ('using' in join) {
      const keys = join.using.map(([l, r]): [string, string] => [this.expr(l).sql, this.expr(r).sql]);
      return ` ON ${legacy ? usingCondition(keys) : keys.map(([l, r]) => `(${l} = ${r})`).join(' AND ')}`;
    }
    return '';
  }

  private tableSql(source: Source, conditions: string[]): string {
    if (source.select) return `(${this.select(source.select, false)}) AS ${q(source.alias)}`;
    const table = source.table!;
    if (table !== 'events') return `(${IDENTITY_SUBQUERIES[table]((alias) => this.guard(alias))}) AS ${q(source.alias)}`;
    if (source.wrapped) return `(${this.eventsSubquery(source)}) AS ${q(source.alias)}`;
    // The first table of a select is guarded in its WHERE, where ClickHouse uses the key to skip other projects' parts.
    const sample = this.sample(source, source.alias);
    conditions.unshift(this.guard(source.alias), ...(sample ? [sample] : []));
    // Every field of the select has been printed by now (constraints included), so the reads of the person are all known.
    const reads = this.personReadsOf(source);
    const person = [
      ...PERSON_JOIN_COLUMNS.filter((c) => reads.columns.has(c)).map(wholePersonColumn),
      ...personPropertyValues(reads.keys),
    ];
    const lazy = source.lazy.pdi && this.lazyJoined.has(source) ? ` ANY LEFT JOIN (${this.identitySubquery(person)}) AS ${q(`${source.alias}__lazy`)} ON ${LAZY_JOIN_KEY} = ${q(`${source.alias}__lazy`)}.${q('distinct_id')}` : '';
    return `events AS ${q(source.alias)}${lazy}`;
  }

  /**
   * What the lazy join reads. With person-on-events, a select that reads no person property takes
   * the person stored on each event, and joins only the distinct ids that moved to another person
   * since (or came back after a deletion): ingest starts a distinct id at version 0 on the person
   * its events carry, and every move raises the version. An id whose events the override squash
   * rewrote at its latest version carries its person already.
   */
  private identitySubquery(person: { alias: string; sql: string }[]): string {
    if (this.personsOnEvents === 'disabled' || person.length > 0) return this.lazySubquery(person);
    // A set of pairs, not a join on each id's latest squash: versions only rise, so an id's latest
    // version is squashed exactly when that pair is in the table.
    const squashed = `SELECT s.distinct_id, s.version FROM squashed_distinct_ids AS s WHERE ${this.guard('s')}`;
    // No squash yet gives 1970: every row is read.
    const settledBefore = `SELECT max(w.settled_before) FROM override_squashes AS w WHERE ${this.guard('w')}`;
    const moved = latestDistinctIds((alias) => this.guard(alias), '__pdi_person_id', { squashed, settledBefore });
    return `SELECT distinct_id, __pdi_person_id FROM (${moved}) AS __moved`;
  }

  /** A distinct id's current person, and the given values of it: the lazy join behind `person_id`, `pdi.` and `person.`. */
  private lazySubquery(person: { alias: string; sql: string }[]): string {
    const pdi = `(${IDENTITY_SUBQUERIES.person_distinct_ids((alias) => this.guard(alias))}) AS __pdi`;
    const columns = ['__pdi.distinct_id AS distinct_id', '__pdi.person_id AS __pdi_person_id', ...person.map((v) => `__p.${v.alias} AS ${v.alias}`)].join(', ');
    if (person.length === 0) return `SELECT ${columns} FROM ${pdi}`;
    return `SELECT ${columns} FROM ${pdi} ANY LEFT JOIN (${latestPersons((alias) => this.guard(alias), person)}) AS __p ON __pdi.person_id = __p.id`;
  }

  private sample(source: Source, alias: string): string | null {
    return source.sample ? sampleCondition(source.sample, q(alias)) : null;
  }

  private eventsSubquery(source: Source): string {
    const columns = [...EVENTS_SUBQUERY_COLUMNS, ...(this.wrappedColumns.get(source) ?? [])].map((c) => `__e.${q(c)} AS ${q(c)}`);
    const sample = this.sample(source, '__e');
    const where = `${this.guard('__e')}${sample ? ` AND ${sample}` : ''}`;
    if (!source.lazy.pdi) return `SELECT ${columns.join(', ')} FROM events AS __e WHERE ${where}`;
    // Its outer select reads the person's columns by name, whole.
    const person = source.lazy.person ? PERSON_JOIN_COLUMNS : [];
    const lazy = ['__pdi_person_id', ...person];
    return `SELECT ${[...columns, ...lazy.map((c) => `__lazy.${q(c)} AS ${q(c)}`)].join(', ')} FROM events AS __e ANY LEFT JOIN (${this.identitySubquery(person.map(wholePersonColumn))}) AS __lazy ON ${LAZY_JOIN_KEY} = __lazy.distinct_id WHERE ${where}`;
  }
}
