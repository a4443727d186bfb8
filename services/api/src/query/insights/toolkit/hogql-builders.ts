import type { Expr, SelectQuery } from '@tributary/hogql';

/** Small HogQL tree builders the insight queries are written with. */

export const field = (...chain: (string | number)[]): Expr => ({ node: 'Field', chain });
export const constant = (value: string | number): Expr => ({ node: 'Constant', value });
export const call = (name: string, ...args: Expr[]): Expr => ({ node: 'Call', name, args });
export const compare = (op: string, left: Expr, right: Expr): Expr => ({ node: 'CompareOperation', op, left, right });
export const alias = (name: string, expr: Expr): Expr => ({ node: 'Alias', alias: name, expr });
export const and = (exprs: Expr[]): Expr => (exprs.length === 1 ? exprs[0]! : { node: 'And', exprs });
export const at = (date: Date): Expr => call('toDateTime', constant(date.toISOString()));
export const or = (exprs: Expr[]): Expr => (exprs.length === 1 ? exprs[0]! : { node: 'Or', exprs });
export const plus = (left: Expr, right: Expr): Expr => ({ node: 'ArithmeticOperation', op: '+', left, right });
export const minus = (left: Expr, right: Expr): Expr => ({ node: 'ArithmeticOperation', op: '-', left, right });
export const lambda = (args: string[], expr: Expr): Expr => ({ node: 'Lambda', args, expr });
export const array = (...exprs: Expr[]): Expr => ({ node: 'Array', exprs });
/** A FROM clause of one table or subquery. */
export const from = (table: string | SelectQuery): SelectQuery['select_from'] => ({ node: 'JoinExpr', table: typeof table === 'string' ? { node: 'Field', chain: [table] } : table });
