/**
 * Where the parts of a JSON text are, found without parsing it again: capture has parsed its
 * body already and wants each event's text as the client sent it, which is cheaper to find than
 * to serialise. Only text that `JSON.parse` accepted may be given: the scan relies on it being
 * well formed, and checks only what is cheap to check.
 */

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** A JSON array or object in a text, and where its direct children are. */
export interface Container {
  kind: 'array' | 'object';
  /** Where its opening bracket is. */
  start: number;
  /** Just past its closing bracket. */
  end: number;
  /**
   * Each direct child as [start, end) offsets, flat (start, end, start, end, …), without the
   * whitespace around it: an array's elements; an object's key and then value, member by member.
   * Flat numbers, because a pair object per child would cost more than finding it does.
   */
  spans: number[];
  /**
   * For an object read with `member`: the value of the last member of that name (`JSON.parse`
   * keeps the last of duplicate keys) when it is an array or object, with its own children;
   * null when there is no such member or its value is neither.
   */
  member?: Container | null;
}

/** JSON's whitespace: no other character (not even a byte order mark) may stand between tokens. */
const isWhitespace = (code: number) => code === SPACE || code === LF || code === CR || code === TAB;

function skipWhitespace(text: string, from: number): number {
  let at = from;
  while (at < text.length && isWhitespace(text.charCodeAt(at))) at += 1;
  return at;
}

/**
 * The offset of the quote that closes the string whose opening quote is at `open`, or -1. It
 * jumps from quote to quote rather than reading the string's characters: a quote closes the
 * string unless an odd number of backslashes stands right before it.
 */
export function stringEnd(text: string, open: number): number {
  let quote = open;
  for (;;) {
    quote = text.indexOf('"', quote + 1);
    if (quote === -1) return -1;
    let backslashes = 0;
    // The opening quote stops the count, so it never leaves the string.
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
  }
}

/** Just past the array or object opening at `open`: brackets are counted, not matched, and strings skipped whole. */
function nestedEnd(text: string, open: number): number {
  let depth = 0;
  for (let at = open; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at === -1) return -1;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      depth += 1;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth -= 1;
      if (depth === 0) return at + 1;
    }
  }
  return -1;
}

/** Just past the value (string, container, number or literal) that starts at `start`, or -1. */
export function valueEnd(text: string, start: number): number {
  const code = text.charCodeAt(start);
  if (code === QUOTE) {
    const quote = stringEnd(text, start);
    return quote === -1 ? -1 : quote + 1;
  }
  if (code === OPEN_ARRAY || code === OPEN_OBJECT) return nestedEnd(text, start);
  let at = start;
  for (; at < text.length; at += 1) {
    const next = text.charCodeAt(at);
    if (next === COMMA || next === CLOSE_ARRAY || next === CLOSE_OBJECT || next === COLON || isWhitespace(next)) break;
  }
  return at === start ? -1 : at;
}

/**
 * Whether the key text at [start, end), quotes included, decodes to `name`. A key without a
 * backslash is what stands between its quotes; only one with an escape needs decoding.
 */
function keyIs(text: string, start: number, end: number, name: string): boolean {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes('\\') ? JSON.parse(text.slice(start, end)) === name : inner === name;
}

/**
 * The array or object whose opening bracket is at `open`, with its direct children; null when
 * there is none there, or what follows is not shaped like one. Each child is skipped by counting
 * brackets (see `valueEnd`), so nested values cost no spans. The value of an object's member
 * named `member` is read as a container too, in the same pass (see `Container.member`).
 */
export function containerAt(text: string, open: number, member?: string): Container | null {
  const opening = text.charCodeAt(open);
  if (opening !== OPEN_ARRAY && opening !== OPEN_OBJECT) return null;
  const kind = opening === OPEN_ARRAY ? 'array' : 'object';
  const closing = kind === 'array' ? CLOSE_ARRAY : CLOSE_OBJECT;
  const container: Container = { kind, start: open, end: -1, spans: [] };
  if (member !== undefined) container.member = null;
  const { spans } = container;
  let at = skipWhitespace(text, open + 1);
  if (text.charCodeAt(at) === closing) {
    container.end = at + 1;
    return container;
  }
  for (;;) {
    // An object's children alternate key and value, a colon after each key and a comma after each value.
    const isKey = kind === 'object' && spans.length % 4 === 0;
    if (isKey && text.charCodeAt(at) !== QUOTE) return null;
    const isMember = member !== undefined && kind === 'object' && !isKey && keyIs(text, spans[spans.length - 2]!, spans[spans.length - 1]!, member);
    const value = isMember ? containerAt(text, at) : null;
    const end = value ? value.end : valueEnd(text, at);
    if (end === -1) return null;
    if (isMember) container.member = value;
    spans.push(at, end);
    at = skipWhitespace(text, end);
    const separator = text.charCodeAt(at);
    if (separator === (isKey ? COLON : COMMA)) {
      at = skipWhitespace(text, at + 1);
    } else if (separator === closing && !isKey) {
      container.end = at + 1;
      return container;
    } else {
      return null;
    }
  }
}

/**
 * The array or object that is the whole of a JSON text, whitespace around it aside; null for any
 * other text. `member` as for `containerAt`.
 */
export function topLevelContainer(text: string, member?: string): Container | null {
  const container = containerAt(text, skipWhitespace(text, 0), member);
  return container !== null && skipWhitespace(text, container.end) === text.length ? container : null;
}
