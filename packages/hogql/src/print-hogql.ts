import type { Expr, JoinExpr, OrderExpr, RatioExpr, SelectLike, SelectQuery, WindowExpr, WindowFrameExpr } from './ast.js';

/**
 * Prints a syntax tree back to HogQL text: the `hogql` of an answer (the query as it ran, limits
 * included) and the names of columns without an alias, as PostHog names them (`count()`).
 */
const identifier = (name: string | number) => (typeof name === 'number' || /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? String(name) : `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``);

function constant(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return `'${value.replace(/[\\']/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}'`;
  if (Array.isArray(value)) return `[${value.map(constant).join(', ')}]`;
  return String(value);
}

const COMPARE: Record<string, string> = { '==': '=', 'in': 'IN', 'not in': 'NOT IN', like: 'LIKE', 'not like': 'NOT LIKE', ilike: 'ILIKE', 'not ilike': 'NOT ILIKE', 'global in': 'GLOBAL IN', 'global not in': 'GLOBAL NOT IN', 'in cohort': 'IN COHORT', 'not in cohort': 'NOT IN COHORT' };

export function printHogQLExpr(expr: Expr): string {
  switch (expr.node) {
    case 'Constant':
      return constant(expr.value);
    case 'Field':
      return expr.chain.map(identifier).join('.');
    case 'Placeholder':
      return `{${printHogQLExpr(expr.expr)}}`;
    case 'Alias':
      return `${printHogQLExpr(expr.expr)} AS ${identifier(expr.alias)}`;
    case 'And':
      return expr.exprs.map((e) => `(${printHogQLExpr(e)})`).join(' AND ');
    case 'Or':
      return expr.exprs.map((e) => `(${printHogQLExpr(e)})`).join(' OR ');
    case 'Not':
      return `NOT (${printHogQLExpr(expr.expr)})`;
    case 'CompareOperation':
      return `${printHogQLExpr(expr.left)} ${COMPARE[expr.op] ?? expr.op} ${printHogQLExpr(expr.right)}`;
    case 'ArithmeticOperation':
      return `(${printHogQLExpr(expr.left)} ${expr.op} ${printHogQLExpr(expr.right)})`;
    case 'BetweenExpr':
      return `${printHogQLExpr(expr.expr)} ${expr.negated ? 'NOT ' : ''}BETWEEN ${printHogQLExpr(expr.low)} AND ${printHogQLExpr(expr.high)}`;
    case 'Tuple':
      return `(${expr.exprs.map(printHogQLExpr).join(', ')}${expr.exprs.length === 1 ? ',' : ''})`;
    case 'Array':
      return `[${expr.exprs.map(printHogQLExpr).join(', ')}]`;
    case 'ArrayAccess':
      return `${printHogQLExpr(expr.array)}[${printHogQLExpr(expr.property)}]`;
    case 'TupleAccess':
      return `${printHogQLExpr(expr.tuple)}.${expr.index}`;
    case 'Lambda':
      return `${expr.args.length === 1 ? identifier(expr.args[0]!) : `(${expr.args.map(identifier).join(', ')})`} -> ${printHogQLExpr(expr.expr)}`;
    case 'TypeCast':
      return `${printHogQLExpr(expr.expr)}::${expr.type_name}`;
    case 'IsDistinctFrom':
      return `${printHogQLExpr(expr.left)} IS ${expr.negated ? 'NOT ' : ''}DISTINCT FROM ${printHogQLExpr(expr.right)}`;
    case 'Call': {
      const params = expr.params ? `(${expr.params.map(printHogQLExpr).join(', ')})` : '';
      return `${expr.name}${params}(${expr.distinct ? 'DISTINCT ' : ''}${expr.args.map(printHogQLExpr).join(', ')})`;
    }
    case 'WindowFunction': {
      const params = expr.args?.length ? `(${expr.args.map(printHogQLExpr).join(', ')})` : '';
      const over = expr.over_expr ? `(${windowText(expr.over_expr)})` : identifier(expr.over_identifier ?? '');
      return `${expr.name}${params}(${(expr.exprs ?? []).map(printHogQLExpr).join(', ')}) OVER ${over}`;
    }
    case 'SelectQuery':
    case 'SelectSetQuery':
      return `(${printHogQL(expr)})`;
    default:
      return `<${expr.node}>`;
  }
}

const order = (o: OrderExpr) => `${printHogQLExpr(o.expr)} ${o.order}`;

const frameText = (end: WindowFrameExpr) => (end.frame_type === 'CURRENT ROW' ? 'CURRENT ROW' : `${end.frame_value ?? 'UNBOUNDED'} ${end.frame_type}`);

function windowText(w: WindowExpr): string {
  const parts: string[] = [];
  if (w.partition_by?.length) parts.push(`PARTITION BY ${w.partition_by.map(printHogQLExpr).join(', ')}`);
  if (w.order_by?.length) parts.push(`ORDER BY ${w.order_by.map(order).join(', ')}`);
  if (w.frame_start) parts.push(`${w.frame_method ?? 'RANGE'} ${w.frame_end ? `BETWEEN ${frameText(w.frame_start)} AND ${frameText(w.frame_end)}` : frameText(w.frame_start)}`);
  return parts.join(' ');
}

function join(j: JoinExpr): string {
  const table = j.table.node === 'Field' ? printHogQLExpr(j.table) : `(${printHogQL(j.table as SelectLike)})`;
  const head = j.join_type ? `${j.join_type} ` : '';
  const alias = j.alias ? ` AS ${identifier(j.alias)}` : '';
  const ratio = (r: RatioExpr) => `${printHogQLExpr(r.left)}${r.right ? `/${printHogQLExpr(r.right)}` : ''}`;
  const sample = j.sample ? ` SAMPLE ${ratio(j.sample.sample_value)}${j.sample.offset_value ? ` OFFSET ${ratio(j.sample.offset_value)}` : ''}` : '';
  const constraint = j.constraint ? ` ${j.constraint.constraint_type} ${printHogQLExpr(j.constraint.expr)}` : '';
  return `${head}${table}${alias}${sample}${constraint}${j.next_join ? ` ${join(j.next_join)}` : ''}`;
}

function ctes(select: SelectQuery): string {
  const list = Array.isArray(select.ctes) ? select.ctes : Object.values(select.ctes ?? {});
  if (list.length === 0) return '';
  return `WITH ${list.map((c) => (c.cte_type === 'subquery' ? `${identifier(c.name)} AS (${printHogQL(c.expr as SelectLike)})` : `${printHogQLExpr(c.expr)} AS ${identifier(c.name)}`)).join(', ')} `;
}

export function printHogQL(query: SelectLike): string {
  if (query.node === 'SelectSetQuery') {
    return [printHogQL(query.initial_select_query), ...query.subsequent_select_queries.map((s) => `${s.set_operator} ${printHogQL(s.select_query)}`)].join(' ');
  }
  const parts = [`${ctes(query)}SELECT ${query.distinct ? 'DISTINCT ' : ''}${query.select.map(printHogQLExpr).join(', ')}`];
  if (query.select_from) parts.push(`FROM ${join(query.select_from)}`);
  if (query.array_join_list?.length) parts.push(`${query.array_join_op ?? 'ARRAY JOIN'} ${query.array_join_list.map(printHogQLExpr).join(', ')}`);
  if (query.prewhere) parts.push(`PREWHERE ${printHogQLExpr(query.prewhere)}`);
  if (query.where) parts.push(`WHERE ${printHogQLExpr(query.where)}`);
  if (query.group_by?.length) parts.push(`GROUP BY ${query.group_by.map(printHogQLExpr).join(', ')}`);
  if (query.having) parts.push(`HAVING ${printHogQLExpr(query.having)}`);
  const windows = Object.entries(query.window_exprs ?? {});
  if (windows.length) parts.push(`WINDOW ${windows.map(([name, w]) => `${identifier(name)} AS (${windowText(w)})`).join(', ')}`);
  if (query.order_by?.length) parts.push(`ORDER BY ${query.order_by.map(order).join(', ')}`);
  if (query.limit_by) parts.push(`LIMIT ${printHogQLExpr(query.limit_by.n)} BY ${query.limit_by.exprs.map(printHogQLExpr).join(', ')}`);
  if (query.limit) parts.push(`LIMIT ${printHogQLExpr(query.limit)}`);
  if (query.offset) parts.push(`OFFSET ${printHogQLExpr(query.offset)}`);
  return parts.join(' ');
}
