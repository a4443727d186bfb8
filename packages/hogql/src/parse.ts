import createHogQLParser, { type HogQLParser } from '@posthog/hogql-parser';
import { bracketDepth } from '@tributary/clickhouse';
import type { Expr, OrderExpr, SelectLike } from './ast.js';
import { HogQLError } from './errors.js';

/** Longest query text taken: PostHog's own queries stay far below it, and parsing is linear in it. */
export const MAX_QUERY_LENGTH = 65_536;
/**
 * Deepest bracket nesting taken. The parser recurses per level inside WebAssembly, whose stack is
 * fixed, and ClickHouse 18.16 has no parser depth limit at all: deep input is refused up front.
 */
export const MAX_QUERY_NESTING = 64;

let parser: HogQLParser | undefined;
let loading: Promise<HogQLParser> | undefined;

/** Loads PostHog's grammar (WebAssembly) once per process; every parse after it is synchronous. */
export async function loadHogQLParser(): Promise<void> {
  loading ??= createHogQLParser();
  parser = await loading;
}

function loaded(): HogQLParser {
  if (!parser) throw new Error('the HogQL parser is not loaded: await loadHogQLParser() at start-up');
  return parser;
}

interface ParseFailure {
  error: true;
  type: string;
  message: string;
  start?: { offset: number };
  end?: { offset: number };
}

function checkInput(text: string): void {
  if (text.length > MAX_QUERY_LENGTH) throw new HogQLError(`The query is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are taken`, 'hogql_syntax_error');
  const depth = bracketDepth(text);
  if (depth > MAX_QUERY_NESTING) throw new HogQLError(`The query nests brackets ${depth} deep; at most ${MAX_QUERY_NESTING} levels are taken`, 'hogql_syntax_error');
}

function run<T>(text: string, parse: (p: HogQLParser) => string): T {
  checkInput(text);
  let result: T | ParseFailure;
  try {
    result = JSON.parse(parse(loaded())) as T | ParseFailure;
  } catch (error) {
    // A trap inside the WebAssembly parser (its stack, say) is the input's fault, not the process's.
    if (error instanceof HogQLError) throw error;
    throw new HogQLError(`The query cannot be parsed: ${error instanceof Error ? error.message : String(error)}`, 'hogql_syntax_error');
  }
  if (typeof result === 'object' && result !== null && (result as ParseFailure).error === true) {
    const failure = result as ParseFailure;
    const span = failure.start ? { start: failure.start.offset, end: failure.end?.offset ?? failure.start.offset } : null;
    const message = failure.type === 'NotImplementedError' ? `Not supported: ${failure.message.replace(/^Unsupported: /, '')}` : `Syntax error: ${failure.message}`;
    throw new HogQLError(message, 'hogql_syntax_error', span);
  }
  return result as T;
}

export const parseSelect = (text: string): SelectLike => run<SelectLike>(text, (p) => p.parseSelect(text));
export const parseExpr = (text: string): Expr => run<Expr>(text, (p) => p.parseExpr(text));
export const parseOrderExpr = (text: string): OrderExpr => run<OrderExpr>(text, (p) => p.parseOrderExpr(text));
