import { inList, join, propertyNumber, propertyText, sql, Sql } from '@tributary/clickhouse';
import type { Expr } from './ast.js';
import { QueryLanguageError } from './parse.js';

/** Columns of the events table an expression may name, and what each compiles to. */
const COLUMNS: Record<string, Sql> = {
  event: sql`event`,
  distinct_id: sql`distinct_id`,
  timestamp: sql`timestamp`,
  uuid: sql`toString(uuid)`,
  person_id: sql`toString(person_id)`,
  elements_chain: sql`elements_chain`,
  properties: sql`properties`,
  created_at: sql`created_at`,
};

/** Functions an expression may call: name -> arity range and how it renders. */
const FUNCTIONS: Record<string, { min: number; max: number; render: (args: Sql[]) => Sql }> = {
  lower: { min: 1, max: 1, render: ([a]) => sql`lower(${a!})` },
  upper: { min: 1, max: 1, render: ([a]) => sql`upper(${a!})` },
  length: { min: 1, max: 1, render: ([a]) => sql`length(${a!})` },
  concat: { min: 2, max: 8, render: (args) => sql`concat(${join(args.map((a) => sql`toString(${a})`))})` },
  coalesce: { min: 1, max: 8, render: (args) => sql`coalesce(${join(args)})` },
  tostring: { min: 1, max: 1, render: ([a]) => sql`toString(${a!})` },
  toint: { min: 1, max: 1, render: ([a]) => sql`toInt64OrNull(toString(${a!}))` },
  tofloat: { min: 1, max: 1, render: ([a]) => sql`toFloat64OrNull(toString(${a!}))` },
  round: { min: 1, max: 2, render: (args) => sql`round(${join(args)})` },
  abs: { min: 1, max: 1, render: ([a]) => sql`abs(${a!})` },
  if: { min: 3, max: 3, render: ([c, a, b]) => sql`if(${c!}, ${a!}, ${b!})` },
  now: { min: 0, max: 0, render: () => sql`now()` },
  today: { min: 0, max: 0, render: () => sql`today()` },
  todate: { min: 1, max: 1, render: ([a]) => sql`toDate(${a!})` },
  tostartofday: { min: 1, max: 1, render: ([a]) => sql`toStartOfDay(${a!})` },
  tostartofhour: { min: 1, max: 1, render: ([a]) => sql`toStartOfHour(${a!})` },
  substring: { min: 3, max: 3, render: ([s, o, l]) => sql`substring(${s!}, ${o!}, ${l!})` },
  position: { min: 2, max: 2, render: ([h, n]) => sql`positionCaseInsensitive(${h!}, ${n!})` },
};

export const ALLOWED_FUNCTIONS = Object.keys(FUNCTIONS);

const isNumberLiteral = (e: Expr): boolean => (e.kind === 'literal' && typeof e.value === 'number') || (e.kind === 'unary' && e.op === '-' && isNumberLiteral(e.arg));

function field(path: string[], numeric: boolean): Sql {
  const [head, ...rest] = path;
  const property = (column: Sql, key: string[]) => {
    if (key.length !== 1) throw new QueryLanguageError(`only top-level properties can be read: ${path.join('.')}`);
    return numeric ? propertyNumber(column, key[0]!) : propertyText(column, key[0]!);
  };
  if (head === 'properties' && rest.length > 0) return property(sql`properties`, rest);
  if (head === 'person' && rest[0] === 'properties' && rest.length > 1) return property(sql`person_properties`, rest.slice(1));
  // Own properties only: `constructor` or `__proto__` must not read Object.prototype's.
  if (head !== undefined && rest.length === 0 && Object.hasOwn(COLUMNS, head)) return COLUMNS[head]!;
  throw new QueryLanguageError(`unknown field ${path.join('.')}: use one of ${Object.keys(COLUMNS).join(', ')}, properties.<key> or person.properties.<key>`);
}

const BINARY: Record<string, string> = {
  and: 'AND', or: 'OR', '=': '=', '!=': '!=', '<': '<', '<=': '<=', '>': '>', '>=': '>=',
  like: 'LIKE', 'not like': 'NOT LIKE', in: 'IN', 'not in': 'NOT IN', '+': '+', '-': '-', '*': '*', '/': '/', '%': '%',
};

/**
 * Compiles an expression to ClickHouse SQL. Every literal goes through the SQL module's escaping
 * and every name through an allow-list, so no input reaches ClickHouse as SQL text.
 */
export function compileExpression(expr: Expr, numeric = false): Sql {
  switch (expr.kind) {
    case 'literal':
      if (typeof expr.value === 'number' && !Number.isFinite(expr.value)) throw new QueryLanguageError('a number is too large to compute with');
      return sql`${expr.value}`;
    case 'field':
      return field(expr.path, numeric);
    case 'array':
      return sql`[${join(expr.items.map((item) => compileExpression(item)))}]`;
    case 'unary':
      return expr.op === 'not' ? sql`NOT (${compileExpression(expr.arg)})` : sql`-(${compileExpression(expr.arg, true)})`;
    case 'call': {
      const name = expr.name.toLowerCase();
      const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
      if (!fn) throw new QueryLanguageError(`function ${expr.name}() is not allowed: use one of ${ALLOWED_FUNCTIONS.join(', ')}`);
      if (expr.args.length < fn.min || expr.args.length > fn.max) {
        throw new QueryLanguageError(`function ${expr.name}() takes ${fn.min === fn.max ? fn.min : `${fn.min} to ${fn.max}`} arguments`);
      }
      return fn.render(expr.args.map((arg) => compileExpression(arg)));
    }
    case 'binary': {
      if (expr.op === 'and' || expr.op === 'or') {
        // A chain of one operator compiles flat, as ClickHouse parses `a OR b OR c`: without a level per operand.
        const operands: Expr[] = [];
        const pending: Expr[] = [expr];
        for (let next = pending.pop(); next; next = pending.pop()) {
          if (next.kind === 'binary' && next.op === expr.op) pending.push(next.right, next.left);
          else operands.push(next);
        }
        return sql`(${join(operands.map((operand) => compileExpression(operand)), ` ${BINARY[expr.op]!} `)})`;
      }
      if (expr.op === 'ilike' || expr.op === 'not ilike') {
        // No ILIKE on 18.16: compare lower-cased sides instead.
        const like = sql`lower(${compileExpression(expr.left)}) LIKE lower(${compileExpression(expr.right)})`;
        return expr.op === 'ilike' ? sql`(${like})` : sql`(NOT ${like})`;
      }
      if ((expr.op === 'in' || expr.op === 'not in') && expr.right.kind === 'array') {
        // 18.16 takes a tuple, not an array, after IN.
        return sql`(${inList(compileExpression(expr.left), expr.right.items.map((item) => compileExpression(item)), expr.op === 'not in')})`;
      }
      const arithmetic = ['+', '-', '*', '/', '%', '<', '<=', '>', '>='].includes(expr.op);
      const numericSides = arithmetic || isNumberLiteral(expr.left) || isNumberLiteral(expr.right);
      const left = compileExpression(expr.left, numericSides);
      const right = compileExpression(expr.right, numericSides);
      return sql`(${left} ${Sql.trusted(BINARY[expr.op]!)} ${right})`;
    }
  }
}
