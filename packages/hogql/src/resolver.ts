import type { CTE, Expr, Field, JoinExpr, OrderExpr, SelectLike, SelectQuery, WindowExpr, WindowFrameExpr, WindowFunction } from './ast.js';
import { MAX_CTE_EXPANSIONS, checkJoinCount, eventsAsSubquery } from './clickhouse-18-16.js';
import { HogQLError, queryError, spanOf as span } from './errors.js';
import { lookupFunction, lookupWindowFunction, type FunctionSpec } from './functions.js';
import { has, requireFeature, type ClickHouseServer } from './server-features.js';
import { printHogQLExpr } from './print-hogql.js';
import { sampleRange } from './sample.js';
import { cteList, type FieldRef, type ResolvedField, type ResolvedItem, type ResolvedJoin, type ResolvedSelectQuery, type SelectScope, type Source } from './resolved-tree.js';
import { TABLES, isTableName } from './schema.js';
import { SESSIONS_COLUMNS, SESSIONS_TABLE, sessionsQuery } from './sessions-view.js';

/**
 * The first stage of printing: resolves every name of a parsed query against `schema.ts` (tables,
 * fields, lazy joins, column aliases, CTEs, lambda arguments) and checks every construct and
 * function against what is allowed, giving the resolved tree of `resolved-tree.ts`. It decides
 * where each table's tenant guard goes (in the select's WHERE, or inside a subquery for joined
 * events) and which parts of the lazy person join each events table needs; `print-clickhouse.ts`
 * then writes the SQL.
 */

interface Scope {
  select: SelectScope;
  sources: Source[];
  /** Explicit aliases of the select's columns; a field names one before a table's column, as in ClickHouse. */
  aliases: Map<string, Expr>;
  /** The alias whose expression is being resolved: a field of its name inside it is the column, not the alias. */
  defining: Set<string>;
  ctes: Map<string, CTE>;
  parent: Scope | null;
  lambdaArgs: Set<string>;
  /** The select's named windows (WINDOW name AS (...)), which OVER name may read. */
  windows: Set<string>;
}

const JOIN_TYPES = new Set(['JOIN', 'INNER JOIN', 'LEFT JOIN', 'LEFT OUTER JOIN', 'RIGHT JOIN', 'RIGHT OUTER JOIN', 'FULL JOIN', 'FULL OUTER JOIN', 'CROSS JOIN', 'ANY LEFT JOIN', 'ANY INNER JOIN', 'ANY JOIN', 'ALL LEFT JOIN', 'ALL INNER JOIN']);
const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);
const TYPE_CASTS: Record<string, string> = { int: 'toInt', integer: 'toInt', float: 'toFloat', double: 'toFloat', string: 'toString', text: 'toString', datetime: 'toDateTime', date: 'toDate', uuid: 'toUUID' };

const newSelectScope = (): SelectScope => ({ sources: [], items: [], printedAliases: new Map() });

function newScope(ctes: CTE[], parent: Scope | null): Scope {
  const select = newSelectScope();
  return { select, sources: select.sources, aliases: new Map(), defining: new Set(), ctes: new Map(ctes.map((c) => [c.name, c])), parent, lambdaArgs: parent?.lambdaArgs ?? new Set(), windows: new Set() };
}

/** The column a select item gives a subquery's readers: its alias, a field's last name, or its HogQL. */
function itemName(expr: Expr): string {
  if (expr.node === 'Alias') return expr.alias;
  if (expr.node === 'Field') return String(expr.chain.at(-1));
  return printHogQLExpr(expr);
}

const resolvedField = (chain: string[], ref: FieldRef): ResolvedField => ({ node: 'Field', chain, ref });

const FRAME_METHODS = new Set(['ROWS', 'RANGE']);
const FRAME_ENDS = new Set(['PRECEDING', 'FOLLOWING', 'CURRENT ROW']);

class Resolver {
  private cteExpansions = 0;
  private subqueryCount = 0;

  constructor(private readonly server: ClickHouseServer) {}

  /** A use of a CTE: its body, counted, since each use is printed as a copy of it. */
  private expandCte(cte: CTE, node: Expr): Expr {
    if (++this.cteExpansions > MAX_CTE_EXPANSIONS) throw queryError(`The query uses its CTEs more than ${MAX_CTE_EXPANSIONS} times`, span(node));
    return cte.expr;
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
    const table = join.table;
    const sampled = join.sample ? sampleRange(join.sample) : undefined;
    const isEvents = table.node === 'Field' && table.chain.length === 1 && table.chain[0] === 'events' && !this.lookupCte(scope, 'events');
    if (join.sample && !isEvents) throw queryError('SAMPLE is only supported on the events table', span(join.sample));
    if (table.node === 'Field') {
      if (table.chain.length !== 1) throw queryError(`Unknown table "${table.chain.join('.')}".`, span(table));
      const name = String(table.chain[0]);
      const alias = join.alias ?? name;
      const cte = this.lookupCte(scope, name);
      if (cte) {
        if (cte.cte_type !== 'subquery') throw queryError(`${name} is an expression, not a table`, span(table));
        const select = this.expandCte(cte, table) as SelectLike;
        return { name: alias, alias, select, columns: this.columnsOf(select, scope), wrapped: false, lazy: { pdi: false, person: false } };
      }
      if (name === SESSIONS_TABLE) return { name: alias, alias, select: sessionsQuery(), columns: SESSIONS_COLUMNS, view: true, wrapped: false, lazy: { pdi: false, person: false } };
      if (!isTableName(name)) throw queryError(`Unknown table "${name}".`, span(table));
      return { name: alias, alias, table: name, wrapped: name === 'events' && eventsAsSubquery(first, hasJoins), lazy: { pdi: false, person: false }, ...(sampled && { sample: sampled }) };
    }
    if (table.node === 'SelectQuery' || table.node === 'SelectSetQuery') {
      const alias = join.alias ?? `__subquery_${this.subqueryCount++}`;
      return { name: alias, alias, select: table, columns: this.columnsOf(table, scope), wrapped: false, lazy: { pdi: false, person: false } };
    }
    throw queryError(`A ${table.node} cannot be a table`, span(table));
  }

  /** The columns a subquery gives, by name, before it is resolved. */
  private columnsOf(select: SelectLike, scope: Scope | null): string[] {
    if (select.node === 'SelectSetQuery') return this.columnsOf(select.initial_select_query, scope);
    const inner = newScope(cteList(select), scope);
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
            else if (name === SESSIONS_TABLE) names.push(...SESSIONS_COLUMNS);
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

  private field(node: Field, scope: Scope): ResolvedField {
    return { node: 'Field', chain: node.chain, ref: this.fieldRef(node, scope), ...(node.start && { start: node.start, end: node.end }) };
  }

  private fieldRef(node: Field, scope: Scope): FieldRef {
    const chain = node.chain.map(String);
    const [head, ...rest] = chain;
    if (head === undefined) throw queryError('An empty field', span(node));
    if (head === '*') throw queryError('* can only stand alone in a select list or in count(*)', span(node));
    if (rest.length === 0 && scope.lambdaArgs.has(head)) return { kind: 'lambdaArg', name: head };
    if (rest.length === 0 && scope.aliases.has(head) && !scope.defining.has(head)) return { kind: 'alias', name: head, select: scope.select };
    const columnCte = this.lookupCte(scope, head);
    if (rest.length === 0 && columnCte && columnCte.cte_type === 'column') return { kind: 'columnCte', expr: this.expr(this.expandCte(columnCte, node), scope) };
    const named = rest.length > 0 ? scope.sources.find((s) => s.name === head) : undefined;
    if (named) return this.fieldOf(named, rest, node);
    const candidates = scope.sources.filter((s) => this.hasField(s, head));
    if (candidates.length > 1) throw queryError(`Ambiguous field ${head}: qualify it with one of ${candidates.map((s) => s.name).join(', ')}`, span(node));
    if (candidates.length === 1) return this.fieldOf(candidates[0]!, chain, node);
    throw queryError(`Unable to resolve field: ${head}`, span(node));
  }

  /**
   * `properties['$browser']` (and `properties['a']['b']`, `properties.a['b']`) is a property read,
   * as `properties.$browser` is, as PostHog reads it; an index into anything but a JSON column stays
   * an array element.
   */
  private jsonKeyAccess(node: Extract<Expr, { node: 'ArrayAccess' }>, scope: Scope): ResolvedField | null {
    const keys: string[] = [];
    let base: Expr = node;
    while (base.node === 'ArrayAccess' && base.property.node === 'Constant' && typeof base.property.value === 'string') {
      keys.unshift(base.property.value);
      base = base.array;
    }
    if (base.node !== 'Field' || keys.length === 0) return null;
    let resolved: ResolvedField;
    try {
      resolved = this.field({ node: 'Field', chain: [...base.chain.map(String), ...keys], ...(node.start && { start: node.start, end: node.end }) }, scope);
    } catch (error) {
      if (error instanceof HogQLError) return null;
      throw error;
    }
    const { ref } = resolved;
    // A subquery's column may be anything (a Map on current releases): only a stored table's JSON columns are read by key.
    return (ref.kind === 'lazy' || (ref.kind === 'column' && ref.source.table !== undefined)) && ref.keys.length > 0 ? resolved : null;
  }

  private hasField(source: Source, name: string): boolean {
    if (source.table) return Object.hasOwn(TABLES[source.table].fields, name);
    return source.columns?.includes(name) ?? false;
  }

  private personId(source: Source): FieldRef {
    source.lazy.pdi = true;
    return { kind: 'personId', source };
  }

  private fieldOf(source: Source, chain: string[], node: Expr): FieldRef {
    const [name, ...rest] = chain as [string, ...string[]];
    if (!source.table) {
      if (!source.columns?.includes(name)) throw queryError(`Unable to resolve field: ${name} (${source.name} has ${source.columns?.join(', ')})`, span(node));
      return { kind: 'column', source, column: name, keys: rest };
    }
    const def = Object.hasOwn(TABLES[source.table].fields, name) ? TABLES[source.table].fields[name]! : undefined;
    if (!def) throw queryError(`Unable to resolve field: ${name}`, span(node));
    switch (def.kind) {
      case 'column':
        if (rest.length === 0 || def.json) return { kind: 'column', source, column: def.column, keys: rest };
        throw queryError(`Field not found: ${rest.join('.')} (${name} has no fields)`, span(node));
      case 'property':
        if (rest.length) throw queryError(`Field not found: ${rest.join('.')}`, span(node));
        return { kind: 'column', source, column: 'properties', keys: [def.key] };
      case 'person_id':
        if (rest.length) throw queryError(`Field not found: ${rest.join('.')}`, span(node));
        return this.personId(source);
      case 'poe': {
        const [sub, ...deeper] = rest;
        if (sub === 'id' && deeper.length === 0) return { kind: 'column', source, column: 'person_id', keys: [] };
        if (sub !== 'properties') throw queryError(`Field not found: poe.${rest.join('.')} (poe has id, properties)`, span(node));
        return { kind: 'column', source, column: 'person_properties', keys: deeper };
      }
      case 'lazy': {
        const [sub, ...deeper] = rest;
        if (def.join === 'pdi') {
          if (sub === 'person_id' && deeper.length === 0) return this.personId(source);
          if (sub === 'distinct_id' && deeper.length === 0) return { kind: 'column', source, column: 'distinct_id', keys: [] };
          throw queryError(`Field not found: pdi.${rest.join('.')} (pdi has distinct_id, person_id)`, span(node));
        }
        if (sub === 'id' && deeper.length === 0) return this.personId(source);
        source.lazy.pdi = true;
        source.lazy.person = true;
        if (sub === 'properties') return { kind: 'lazy', source, column: '__person_properties', keys: deeper };
        if ((sub === 'created_at' || sub === 'is_identified') && deeper.length === 0) return { kind: 'lazy', source, column: `__person_${sub}`, keys: [] };
        throw queryError(`Field not found: person.${rest.join('.')} (person has id, properties, created_at, is_identified)`, span(node));
      }
    }
  }

  // ---- Expressions.

  private exprs(nodes: Expr[], scope: Scope): Expr[] {
    return nodes.map((e) => this.expr(e, scope));
  }

  private expr(node: Expr, scope: Scope): Expr {
    switch (node.node) {
      case 'Constant':
      case 'Placeholder':
        return node;
      case 'Field':
        return this.field(node, scope);
      case 'Alias':
        throw queryError('An alias can only name a column of a select list', span(node));
      // Each node is built whole rather than spread from the parsed one: a spread with keys overridden measured several times slower.
      case 'And':
      case 'Or':
      case 'Tuple':
      case 'Array':
        return { node: node.node, exprs: this.exprs(node.exprs, scope), start: node.start, end: node.end } as Expr;
      case 'Not':
        return { node: 'Not', expr: this.expr(node.expr, scope), start: node.start, end: node.end };
      case 'CompareOperation': {
        const op = node.op.toLowerCase();
        const left = this.expr(node.left, scope);
        const right = op === 'in' || op === 'not in' ? this.inSet(node.right, scope) : this.expr(node.right, scope);
        return { node: 'CompareOperation', op: node.op, left, right, start: node.start, end: node.end };
      }
      case 'ArithmeticOperation':
        if (!ARITHMETIC.has(node.op)) throw queryError(`Unknown operator ${node.op}`, span(node));
        return { node: 'ArithmeticOperation', op: node.op, left: this.expr(node.left, scope), right: this.expr(node.right, scope), start: node.start, end: node.end };
      case 'BetweenExpr':
        return { node: 'BetweenExpr', negated: node.negated, expr: this.expr(node.expr, scope), low: this.expr(node.low, scope), high: this.expr(node.high, scope), start: node.start, end: node.end };
      case 'ArrayAccess':
        return this.jsonKeyAccess(node, scope) ?? { node: 'ArrayAccess', array: this.expr(node.array, scope), property: this.expr(node.property, scope), start: node.start, end: node.end };
      case 'TupleAccess':
        if (!Number.isInteger(node.index) || node.index < 1) throw queryError('A tuple index starts at 1', span(node));
        return { node: 'TupleAccess', tuple: this.expr(node.tuple, scope), index: node.index, start: node.start, end: node.end };
      case 'TypeCast': {
        const fn = TYPE_CASTS[node.type_name.toLowerCase()];
        if (!fn) throw queryError(`Unknown type ${node.type_name} for ::, use one of ${Object.keys(TYPE_CASTS).join(', ')}`, span(node));
        return this.call({ node: 'Call', name: fn, args: [node.expr], ...(node.start && { start: node.start }) }, scope);
      }
      case 'Call':
        return this.call(node, scope);
      case 'WindowFunction':
        return this.windowFunction(node, scope);
      case 'SelectQuery':
      case 'SelectSetQuery':
        return this.select(node, scope);
      case 'Lambda':
        throw queryError('A lambda can only be the first argument of an array function such as arrayMap', span(node));
      case 'IsDistinctFrom':
        throw queryError('IS DISTINCT FROM is not supported: compare with = and isNull()', span(node));
      default:
        throw queryError(`${node.node} is not supported`, span(node));
    }
  }

  /**
   * The right side of IN. A CTE's name there means its rows (a subquery CTE) or its value (a
   * column CTE), as in HogQL, and a table's name is refused: ClickHouse would read that table
   * unguarded. What the printer makes of the rest is in its `inSet`.
   */
  private inSet(right: Expr, scope: Scope): Expr {
    if (right.node === 'SelectQuery' || right.node === 'SelectSetQuery') return this.select(right, scope);
    if (right.node === 'Constant' || right.node === 'Placeholder') return right;
    if (right.node === 'Tuple' || right.node === 'Array') return this.expr(right, scope);
    if (right.node === 'Field' && right.chain.length === 1 && !scope.lambdaArgs.has(String(right.chain[0])) && !scope.aliases.has(String(right.chain[0]))) {
      const name = String(right.chain[0]);
      const cte = this.lookupCte(scope, name);
      if (cte?.cte_type === 'subquery') return this.select(this.expandCte(cte, right) as SelectLike, scope);
      if (cte?.cte_type === 'column') return this.inSet(this.expandCte(cte, right), scope);
      if ((isTableName(name) || name === SESSIONS_TABLE) && !scope.sources.some((s) => this.hasField(s, name))) {
        throw queryError(`IN takes a list, an array or a subquery, not the table ${name}: write (SELECT column FROM ${name})`, span(right));
      }
    }
    return this.expr(right, scope);
  }

  /** Checks a call's arity and parameters against its spec and the server; `count(*)` is `count()`. */
  private checkedArgs(node: Expr, name: string, spec: FunctionSpec, given: Expr[], params: Expr[]): Expr[] {
    if (spec.since) requireFeature(this.server, spec.since, node);
    const star = given.length === 1 && given[0]!.node === 'Field' && given[0]!.chain.length === 1 && given[0]!.chain[0] === '*';
    const args = star && name === 'count' ? [] : given;
    if (args.length < spec.min || args.length > spec.max) {
      const expected = spec.min === spec.max ? `${spec.min}` : `${spec.min} to ${spec.max}`;
      throw queryError(`Function '${name}' expects ${expected} argument${spec.max === 1 ? '' : 's'}, found ${args.length}`, span(node));
    }
    if (spec.params) {
      if (params.length < spec.params[0] || params.length > spec.params[1]) throw queryError(`Aggregation '${name}' takes ${spec.params[0]} to ${spec.params[1]} parameters, found ${params.length}`, span(node));
    } else if (params.length) throw queryError(`Function '${name}' takes no parameters`, span(node));
    return args;
  }

  private call(node: Extract<Expr, { node: 'Call' }>, scope: Scope): Expr {
    const found = lookupFunction(node.name);
    if (!found) throw queryError(`Unsupported function call '${node.name}(...)'`, span(node));
    const { name, spec } = found;
    const params = node.params ?? [];
    const args = this.checkedArgs(node, name, spec, node.args, params);
    if (node.distinct && !spec.aggregate) throw queryError(`DISTINCT is only for aggregations, not '${name}'`, span(node));
    const resolvedCall = (resolvedArgs: Expr[], resolvedParams: Expr[]): Expr => ({ node: 'Call', name, args: resolvedArgs, params: resolvedParams, distinct: node.distinct, start: node.start, end: node.end });
    if (name === 'in' || name === 'notIn') return resolvedCall([this.expr(args[0]!, scope), this.inSet(args[1]!, scope)], []);
    const resolvedArgs = args.map((arg, i): Expr => {
      if (arg.node !== 'Lambda') return this.expr(arg, scope);
      if (!spec.lambdaFirst || i !== 0) throw queryError(`A lambda can only be the first argument of an array function such as arrayMap`, span(arg));
      for (const a of arg.args) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(a)) throw queryError(`Lambda argument ${a} is not a plain name`, span(arg));
      return { node: 'Lambda', args: arg.args, expr: this.expr(arg.expr, { ...scope, lambdaArgs: new Set([...scope.lambdaArgs, ...arg.args]) }), start: arg.start, end: arg.end };
    });
    return resolvedCall(resolvedArgs, this.exprs(params, scope));
  }

  private windowFunction(node: WindowFunction, scope: Scope): WindowFunction {
    requireFeature(this.server, 'windowFunctions', node);
    const found = lookupWindowFunction(node.name);
    if (!found) throw queryError(`'${node.name}' cannot be used with OVER: use an aggregate, row_number, rank, dense_rank, lagInFrame, leadInFrame, first_value, last_value or nth_value`, span(node));
    const { name, spec } = found;
    const params = node.args ?? [];
    const exprs = this.checkedArgs(node, name, spec, node.exprs ?? [], params);
    if (node.over_identifier !== undefined && node.over_identifier !== null) {
      if (!scope.windows.has(node.over_identifier)) throw queryError(`No window named ${node.over_identifier}: define it with WINDOW ${node.over_identifier} AS (...)`, span(node));
      return { ...node, name, exprs: this.exprs(exprs, scope), args: this.exprs(params, scope) };
    }
    if (!node.over_expr) throw queryError(`${name} needs OVER`, span(node));
    return { ...node, name, exprs: this.exprs(exprs, scope), args: this.exprs(params, scope), over_expr: this.window(node.over_expr, scope) };
  }

  private window(w: WindowExpr, scope: Scope): WindowExpr {
    const frameEnd = (end: WindowFrameExpr | null | undefined): WindowFrameExpr | null => {
      if (!end) return null;
      if (!FRAME_ENDS.has(end.frame_type)) throw queryError(`${end.frame_type} cannot end a window frame`, span(w));
      const value = end.frame_value;
      if (value !== undefined && value !== null && !(Number.isInteger(value) && value >= 0)) throw queryError('A window frame offset must be a whole number', span(w));
      return end;
    };
    if (w.frame_method && !FRAME_METHODS.has(w.frame_method)) throw queryError(`${w.frame_method} frames are not supported: use ROWS or RANGE`, span(w));
    return {
      ...w,
      partition_by: w.partition_by ? this.exprs(w.partition_by, scope) : null,
      order_by: w.order_by ? w.order_by.map((o) => this.orderExpr(o, scope)) : null,
      frame_start: frameEnd(w.frame_start),
      frame_end: frameEnd(w.frame_end),
    };
  }

  private orderExpr(o: OrderExpr, scope: Scope): OrderExpr {
    if (o.with_fill) throw queryError('WITH FILL is not supported', span(o));
    return { ...o, expr: this.expr(o.expr, scope) };
  }

  // ---- Selects.

  select(query: SelectLike, parent: Scope | null): SelectLike {
    if (query.node === 'SelectQuery') return this.selectQuery(query, parent);
    const initial = this.select(query.initial_select_query, parent);
    const subsequent = query.subsequent_select_queries.map((next) => {
      if (next.set_operator !== 'UNION ALL') throw queryError(`${next.set_operator} is not supported: use UNION ALL`, span(next.select_query));
      return { ...next, select_query: this.select(next.select_query, parent) };
    });
    return { ...query, initial_select_query: initial, subsequent_select_queries: subsequent };
  }

  /** A select resolved in the order its SQL reads: sources, columns, clauses, join constraints, then the subqueries it reads from. */
  private selectQuery(query: SelectQuery, parent: Scope | null): ResolvedSelectQuery {
    for (const [key, message] of [
      ['qualify', 'QUALIFY is not supported'],
      ['limit_with_ties', 'LIMIT WITH TIES is not supported'],
    ] as const) {
      if (query[key]) throw queryError(message, span(query));
    }
    const scope = newScope(cteList(query), parent);

    const joins: JoinExpr[] = [];
    for (let join = query.select_from; join; join = join.next_join ?? null) joins.push(join);
    if (!has(this.server, 'manyJoins')) checkJoinCount(joins);
    joins.forEach((join, i) => {
      const source = this.sourceOf(join, scope, i === 0, joins.length > 1);
      if (scope.sources.some((s) => s.name === source.name)) throw queryError(`Two tables are named ${source.name}: give one an alias`, span(join));
      scope.sources.push(source);
    });
    for (const item of query.select) if (item.node === 'Alias') scope.aliases.set(item.alias, item.expr);
    for (const item of query.array_join_list ?? []) if (item.node === 'Alias') scope.aliases.set(item.alias, item.expr);
    const windows = Object.entries(query.window_exprs ?? {});
    if (windows.length) requireFeature(this.server, 'windowFunctions', query);
    for (const [name] of windows) scope.windows.add(name);

    scope.select.items = query.select.flatMap((item): ResolvedItem[] => {
      if (item.node === 'Field' && item.chain.at(-1) === '*') {
        return this.asterisk(item, scope).map(([source, field]) => ({ expr: resolvedField([field], this.fieldOf(source, [field], item)), name: field, column: field, implicit: true, node: item }));
      }
      if (item.node === 'Alias') {
        scope.defining.add(item.alias);
        const expr = this.expr(item.expr, scope);
        scope.defining.delete(item.alias);
        return [{ expr, name: item.alias, column: item.alias, implicit: false, node: item }];
      }
      return [{ expr: this.expr(item, scope), name: itemName(item), column: printHogQLExpr(item), implicit: true, node: item }];
    });
    if (scope.select.items.length === 0) throw queryError('A select needs at least one column', span(query));

    // Built whole rather than spread from the parsed node: a spread with its keys overridden measured several times slower.
    const resolved: ResolvedSelectQuery = {
      node: 'SelectQuery',
      start: query.start,
      end: query.end,
      select: query.select,
      distinct: query.distinct,
      select_from: query.select_from,
      array_join_op: query.array_join_op,
      limit: query.limit,
      offset: query.offset,
      array_join_list: query.array_join_list?.map((e) => (e.node === 'Alias' ? { ...e, expr: this.expr(e.expr, scope) } : this.expr(e, scope))),
      prewhere: query.prewhere && this.expr(query.prewhere, scope),
      where: query.where && this.expr(query.where, scope),
      group_by: query.group_by?.map((e) => this.expr(e, scope)),
      having: query.having && this.expr(query.having, scope),
      window_exprs: windows.length ? Object.fromEntries(windows.map(([name, w]) => [name, this.window(w, scope)])) : null,
      order_by: query.order_by?.map((o) => this.orderExpr(o, scope)),
      limit_by: query.limit_by && { ...query.limit_by, exprs: this.exprs(query.limit_by.exprs, scope) },
      scope: scope.select,
    };
    // Constraints before the subqueries: one may name a lazy field of an earlier table, which that table's SQL must then join.
    joins.forEach((join, i) => {
      if (i > 0) scope.sources[i]!.join = this.joinOf(join, scope, i);
    });
    // A view reads the stored tables, not a CTE of the query that names it.
    for (const source of scope.sources) if (source.select) source.select = this.select(source.select, source.view ? null : scope);
    return resolved;
  }

  private asterisk(item: Field, scope: Scope): [Source, string][] {
    const sources = item.chain.length === 1 ? scope.sources : scope.sources.filter((s) => s.name === item.chain[0]);
    if (item.chain.length > 2 || sources.length === 0) throw queryError(`Unable to resolve field: ${item.chain.join('.')}`, span(item));
    return sources.flatMap((s) => (s.table ? TABLES[s.table].asterisk : (s.columns ?? [])).map((f): [Source, string] => [s, f]));
  }

  private joinOf(join: JoinExpr, scope: Scope, index: number): ResolvedJoin {
    const type = join.join_type ?? 'JOIN';
    if (!JOIN_TYPES.has(type)) throw queryError(`${type} is not supported`, span(join));
    const constraint = join.constraint;
    if (type === 'CROSS JOIN') {
      if (constraint) throw queryError('A CROSS JOIN takes no ON or USING', span(join));
      return { type };
    }
    if (!constraint) throw queryError(`${type} needs ON or USING`, span(join));
    if (constraint.constraint_type === 'ON') return { type, on: this.expr(constraint.expr, scope) };
    const names = constraint.expr.node === 'Tuple' ? constraint.expr.exprs : [constraint.expr];
    const [left, right] = [scope.sources[index - 1]!, scope.sources[index]!];
    const using = names.map((n): [Field, Field] => {
      if (n.node !== 'Field' || n.chain.length !== 1) throw queryError('USING takes column names', span(n));
      const name = String(n.chain[0]);
      return [resolvedField([name], this.fieldOf(left, [name], n)), resolvedField([name], this.fieldOf(right, [name], n))];
    });
    return { type, using };
  }
}

/** Resolves a parsed query (see `Resolver`). */
export function resolveQuery(query: SelectLike, server: ClickHouseServer): SelectLike {
  return new Resolver(server).select(query, null);
}

