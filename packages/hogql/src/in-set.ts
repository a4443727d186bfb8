import type { Expr } from './ast.js';

/** An expression of constants alone (no name, no subquery): ClickHouse computes it as a value wherever it stands. */
export function isConstantShaped(expr: Expr): boolean {
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
 * Whether the right side of IN is printed as a set (a subquery or a list of constants), rather
 * than as `has()` over an array: ClickHouse treats NULL differently in the two.
 */
export function printsAsSet(right: Expr): boolean {
  switch (right.node) {
    case 'SelectQuery':
    case 'SelectSetQuery':
    case 'Constant':
    case 'Placeholder':
      return true;
    case 'Tuple':
    case 'Array':
      return right.exprs.every(isConstantShaped);
    default:
      return false;
  }
}
