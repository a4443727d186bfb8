import { parseExpr, queryError, type Expr } from '@tributary/hogql';

/** A formula's tree, checked once: numbers, series letters, + - * / and brackets, nothing else. */
export type Formula = Expr;

const OPERATORS = new Set(['+', '-', '*', '/']);

/** The letter naming series `index` (0 is A), as PostHog names series in formulas. */
export const seriesLetter = (index: number): string => String.fromCharCode(65 + index);

function check(expr: Expr, seriesCount: number): void {
  switch (expr.node) {
    case 'Constant':
      if (typeof expr.value !== 'number') throw queryError(`trendsFilter.formula: only numbers, series letters and + - * / are allowed, not ${JSON.stringify(expr.value)}`);
      return;
    case 'Field': {
      const name = expr.chain.length === 1 ? String(expr.chain[0]).toUpperCase() : '';
      if (!/^[A-Z]$/.test(name)) throw queryError(`trendsFilter.formula: ${expr.chain.join('.')} is not a series letter`);
      if (name.charCodeAt(0) - 65 >= seriesCount) throw queryError(`trendsFilter.formula: series ${name} does not exist (the query has ${seriesCount})`);
      return;
    }
    case 'ArithmeticOperation':
      if (!OPERATORS.has(expr.op)) throw queryError(`trendsFilter.formula: the operator ${expr.op} is not allowed`);
      check(expr.left, seriesCount);
      check(expr.right, seriesCount);
      return;
    default:
      throw queryError('trendsFilter.formula: only numbers, series letters and + - * / are allowed');
  }
}

/** Parses a formula such as `A/B*100` with the HogQL grammar and refuses any node but arithmetic, numbers and letters. */
export async function parseFormula(text: string, seriesCount: number): Promise<Formula> {
  const expr = await parseExpr(text);
  check(expr, seriesCount);
  return expr;
}

/** The formula's value for one bucket; a division by zero (or anything not finite) is 0, as PostHog charts it. */
export function evaluateFormula(formula: Formula, values: Record<string, number>): number {
  const value = evaluate(formula, values);
  return Number.isFinite(value) ? value : 0;
}

function evaluate(expr: Expr, values: Record<string, number>): number {
  switch (expr.node) {
    case 'Constant':
      return expr.value as number;
    case 'Field':
      return values[String(expr.chain[0]).toUpperCase()] ?? 0;
    case 'ArithmeticOperation': {
      const left = evaluate(expr.left, values);
      const right = evaluate(expr.right, values);
      if (expr.op === '+') return left + right;
      if (expr.op === '-') return left - right;
      if (expr.op === '*') return left * right;
      return left / right;
    }
    default:
      return Number.NaN;
  }
}
