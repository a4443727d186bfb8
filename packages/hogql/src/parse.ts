import createHogQLParser, { type HogQLParser } from '@posthog/hogql-parser';
import { LRUCache } from 'lru-cache';
import type { Expr, OrderExpr, SelectLike } from './ast.js';
import { HogQLError } from './errors.js';

/** Longest query text taken: PostHog's own queries stay far below it, and parsing is linear in it. */
export const MAX_QUERY_LENGTH = 65_536;

/**
 * The grammar's parser (ANTLR in WebAssembly) takes time that grows far faster than the input
 * for deep nesting (40 brackets: a third of a second; 200: 13 s), and a few hundred chained
 * operators overflow its fixed stack, which leaves the module unusable. So the shapes that nest
 * are counted before parsing and refused past bounds no hand-written query comes near.
 */
export const PARSE_LIMITS = {
  /** Brackets within brackets. */
  nesting: 20,
  /** Binary operators (and the `?` of `a ? b : c`): each chain of them nests one level per operator. */
  operators: 240,
  ternaries: 60,
  /** `NOT`s, each a level, slow to predict. */
  nots: 16,
  /** Names in one dotted chain, such as `properties.a.b`. */
  chain: 16,
};

let parser: HogQLParser | undefined;
let loading: Promise<HogQLParser> | undefined;

/** Loads PostHog's grammar (WebAssembly) once per process; parses wait for it. */
export async function loadHogQLParser(): Promise<void> {
  loading ??= createHogQLParser().then((loaded) => {
    // The first parse compiles the grammar's code paths (a quarter of a second): done here, not in a client's request.
    loaded.parseSelect('SELECT event, count() FROM events WHERE timestamp > now() - INTERVAL 1 DAY AND properties.a = 1 GROUP BY event ORDER BY 2 DESC LIMIT 10');
    return loaded;
  });
  parser = await loading;
}

interface ParseFailure {
  error: true;
  type: string;
  message: string;
  start?: { offset: number };
  end?: { offset: number };
}

const tooComplex = (what: string, count: number, limit: number) =>
  new HogQLError(`The query is too complex to parse: ${count} ${what}, at most ${limit} are taken`, 'hogql_syntax_error');

/** Counts what makes parsing slow or deep, outside strings, quoted names and comments. */
export function checkQueryShape(text: string): void {
  if (text.length > MAX_QUERY_LENGTH) throw new HogQLError(`The query is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are taken`, 'hogql_syntax_error');
  let depth = 0;
  let deepest = 0;
  let operators = 0;
  let ternaries = 0;
  let nots = 0;
  let chain = 1;
  let longestChain = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (c === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close === -1 ? text.length : close + 1;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === '?') ternaries++;
    else if ('+-*/%=<>!|'.includes(c)) {
      operators++;
      while ('=<>|~*!'.includes(text[i + 1] ?? '') && text[i + 1] !== undefined) i++;
    } else if (c === '.') {
      if (/[A-Za-z_$`]/.test(text[i + 1] ?? '')) longestChain = Math.max(longestChain, ++chain);
    } else if (/[A-Za-z_$]/.test(c)) {
      let j = i;
      while (j < text.length && /[A-Za-z0-9_$]/.test(text[j]!)) j++;
      const word = text.slice(i, j).toLowerCase();
      if (word === 'and' || word === 'or' || word === 'like' || word === 'ilike' || word === 'in') operators++;
      else if (word === 'not') nots++;
      if (text[j] !== '.') chain = 1;
      i = j - 1;
    } else if (c !== ' ') chain = 1;
  }
  if (deepest > PARSE_LIMITS.nesting) throw new HogQLError(`The query nests brackets ${deepest} deep; at most ${PARSE_LIMITS.nesting} levels are taken`, 'hogql_syntax_error');
  if (operators > PARSE_LIMITS.operators) throw tooComplex('operators', operators, PARSE_LIMITS.operators);
  if (ternaries > PARSE_LIMITS.ternaries) throw tooComplex('ternary operators', ternaries, PARSE_LIMITS.ternaries);
  if (nots > PARSE_LIMITS.nots) throw tooComplex('NOTs', nots, PARSE_LIMITS.nots);
  if (longestChain > PARSE_LIMITS.chain) throw tooComplex('names in one dotted chain', longestChain, PARSE_LIMITS.chain);
}

/**
 * Parsed trees by kind and text. The grammar's parser is slow, and the same queries come again
 * and again (dashboards, tools, pages of a list); the tree is kept as its JSON text and parsed
 * afresh for each use, so no caller can change another's copy.
 */
const parsed = new LRUCache<string, string>({ max: 5_000, maxSize: 64 * 1024 * 1024, sizeCalculation: (json) => json.length || 1 });

/** How many parsed trees are kept (for tests and the status page). */
export const cachedTreeCount = (): number => parsed.size;

async function run<T>(text: string, kind: string, parse: (p: HogQLParser) => string): Promise<T> {
  const key = `${kind}\u0000${text}`;
  const known = parsed.get(key);
  if (known !== undefined) return JSON.parse(known) as T;
  checkQueryShape(text);
  await loadHogQLParser();
  let json: string;
  let result: T | ParseFailure;
  try {
    json = parse(parser!);
    result = JSON.parse(json) as T | ParseFailure;
  } catch (error) {
    // A trap leaves the WebAssembly instance broken for every later parse: the next one loads a new one.
    parser = undefined;
    loading = undefined;
    throw new HogQLError(`The query cannot be parsed: ${error instanceof Error ? error.message : String(error)}`, 'hogql_syntax_error');
  }
  if (typeof result === 'object' && result !== null && (result as ParseFailure).error === true) {
    const failure = result as ParseFailure;
    const span = failure.start ? { start: failure.start.offset, end: failure.end?.offset ?? failure.start.offset } : null;
    const message = failure.type === 'NotImplementedError' ? `Not supported: ${failure.message.replace(/^Unsupported: /, '')}` : `Syntax error: ${failure.message}`;
    throw new HogQLError(message, 'hogql_syntax_error', span);
  }
  parsed.set(key, json);
  return result as T;
}

export const parseSelect = (text: string): Promise<SelectLike> => run<SelectLike>(text, 'select', (p) => p.parseSelect(text));
export const parseExpr = (text: string): Promise<Expr> => run<Expr>(text, 'expr', (p) => p.parseExpr(text));
/** The grammar's ORDER BY rule stops at the end of what it reads, leaving the rest unread: refused, as parseExpr refuses it. */
export async function parseOrderExpr(text: string): Promise<OrderExpr> {
  const order = await run<OrderExpr>(text, 'order', (p) => p.parseOrderExpr(text));
  const end = order.end?.offset ?? text.length;
  const rest = text.slice(end).replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim();
  if (rest) throw new HogQLError(`Syntax error: unexpected text after the ORDER BY expression: ${JSON.stringify(rest.slice(0, 40))}`, 'hogql_syntax_error', { start: end, end: text.length });
  return order;
}
