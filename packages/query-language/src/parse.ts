import P from 'parsimmon';
import type { BinaryOp, Expr } from './ast.js';

export class QueryLanguageError extends Error {}

const ws = P.optWhitespace;
const token = <T>(parser: P.Parser<T>) => parser.skip(ws);
const keyword = (word: string) => token(P.regexp(new RegExp(`${word.replace(' ', '\\s+')}(?![A-Za-z0-9_$])`, 'i')).map(() => word.toLowerCase()));
const symbol = (text: string) => token(P.string(text));

const KEYWORDS = new Set(['and', 'or', 'not', 'like', 'ilike', 'in', 'true', 'false', 'null']);

const identifier = token(P.regexp(/[A-Za-z_$][A-Za-z0-9_$]*/)).assert((name) => !KEYWORDS.has(name.toLowerCase()), 'an identifier');
const quotedIdentifier = token(P.regexp(/`((?:[^`\\]|\\.)*)`/, 1).map((s) => s.replace(/\\(.)/g, '$1')));

const numberLiteral = token(P.regexp(/\d+(\.\d+)?([eE][+-]?\d+)?/)).map((text): Expr => ({ kind: 'literal', value: Number(text) }));
const stringLiteral = token(
  P.regexp(/'((?:[^'\\]|\\.)*)'/, 1).map((body): Expr => ({
    kind: 'literal',
    value: body.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', '0': '\0' })[c] ?? c),
  })),
);
const constant = P.alt(
  keyword('true').map((): Expr => ({ kind: 'literal', value: true })),
  keyword('false').map((): Expr => ({ kind: 'literal', value: false })),
  keyword('null').map((): Expr => ({ kind: 'literal', value: null })),
);

type Ops = [P.Parser<string>, BinaryOp][];

function leftAssociative(operand: P.Parser<Expr>, ops: Ops): P.Parser<Expr> {
  const operator = P.alt(...ops.map(([parser, op]) => parser.map(() => op)));
  return P.seqMap(operand, P.seq(operator, operand).many(), (first, rest) =>
    rest.reduce<Expr>((left, [op, right]) => ({ kind: 'binary', op, left, right }), first),
  );
}

const language = P.createLanguage<{ expr: Expr; primary: Expr; unary: Expr; comparison: Expr; not: Expr }>({
  expr: (r) => leftAssociative(leftAssociative(r.not, [[keyword('and'), 'and']]), [[keyword('or'), 'or']]),
  not: (r) => P.alt(keyword('not').then(r.not).map((arg): Expr => ({ kind: 'unary', op: 'not', arg })), r.comparison),
  comparison: (r) => {
    const multiplicative = leftAssociative(r.unary, [[symbol('*'), '*'], [symbol('/'), '/'], [symbol('%'), '%']]);
    const additive = leftAssociative(multiplicative, [[symbol('+'), '+'], [symbol('-'), '-']]);
    const operator = P.alt<BinaryOp>(
      symbol('==').map(() => '='),
      symbol('!=').map(() => '!='),
      symbol('<>').map(() => '!='),
      symbol('<=').map(() => '<='),
      symbol('>=').map(() => '>='),
      symbol('=').map(() => '='),
      symbol('<').map(() => '<'),
      symbol('>').map(() => '>'),
      keyword('not like').map(() => 'not like'),
      keyword('not ilike').map(() => 'not ilike'),
      keyword('not in').map(() => 'not in'),
      keyword('like').map(() => 'like'),
      keyword('ilike').map(() => 'ilike'),
      keyword('in').map(() => 'in'),
    );
    return P.seqMap(additive, P.seq(operator, additive).atMost(1), (left, rest) => {
      const [pair] = rest;
      return pair ? { kind: 'binary', op: pair[0], left, right: pair[1] } : left;
    });
  },
  unary: (r) => P.alt(symbol('-').then(r.unary).map((arg): Expr => ({ kind: 'unary', op: '-', arg })), r.primary),
  primary: (r) =>
    P.alt(
      numberLiteral,
      stringLiteral,
      constant,
      symbol('(').then(r.expr).skip(symbol(')')),
      symbol('[').then(P.sepBy(r.expr, symbol(','))).skip(symbol(']')).map((items): Expr => ({ kind: 'array', items })),
      P.seqMap(identifier, symbol('(').then(P.sepBy(r.expr, symbol(','))).skip(symbol(')')), (name, args): Expr => ({ kind: 'call', name, args })),
      P.sepBy1(P.alt(identifier, quotedIdentifier), symbol('.')).map((path): Expr => ({ kind: 'field', path })),
    ),
});

const expression = ws.then(language.expr).skip(P.eof);

/**
 * How deeply an expression may nest. ClickHouse 18.16's parser recurses per level of nesting
 * with no limit of its own and dies of a stack overflow near a thousand levels, taking the server
 * down without a log line (`1+1+...+1` two thousand times did it); each level here compiles to
 * one or two levels of SQL. A chain of `and` or `or` counts once: it compiles flat.
 */
export const MAX_EXPRESSION_DEPTH = 64;

const chains = (parent: Expr, child: Expr) => parent.kind === 'binary' && (parent.op === 'and' || parent.op === 'or') && child.kind === 'binary' && child.op === parent.op;

/** The nesting depth of an expression as it compiles, walked without recursion (a left-deep `1+1+...` parses to any depth). */
export function expressionDepth(root: Expr): number {
  let deepest = 0;
  const pending: [Expr, number][] = [[root, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [expr, depth] = next;
    deepest = Math.max(deepest, depth);
    const children = expr.kind === 'binary' ? [expr.left, expr.right] : expr.kind === 'unary' ? [expr.arg] : expr.kind === 'call' ? expr.args : expr.kind === 'array' ? expr.items : [];
    for (const child of children) pending.push([child, chains(expr, child) ? depth : depth + 1]);
  }
  return deepest;
}

/**
 * Parses one expression; a syntax error names the position and what was expected there, and an
 * expression nested deeper than `MAX_EXPRESSION_DEPTH` is refused. The parser recurses per level
 * of nesting, so an expression nested thousands deep (`((((1))))`, `not not not ...`) exhausts
 * the stack: that is the expression's fault, not a server error.
 */
export function parseExpression(source: string): Expr {
  let result: P.Result<Expr>;
  try {
    result = expression.parse(source);
  } catch (error) {
    if (error instanceof RangeError) throw new QueryLanguageError('the expression nests too deeply');
    throw error;
  }
  if (result.status) {
    const depth = expressionDepth(result.value);
    if (depth > MAX_EXPRESSION_DEPTH) throw new QueryLanguageError(`the expression nests ${depth} levels deep; at most ${MAX_EXPRESSION_DEPTH} are allowed`);
    return result.value;
  }
  const { offset } = result.index;
  const found = source.slice(offset, offset + 15) || 'the end';
  throw new QueryLanguageError(`syntax error at position ${offset + 1} near ${JSON.stringify(found)}: expected ${[...new Set(result.expected)].slice(0, 6).join(', ')}`);
}
