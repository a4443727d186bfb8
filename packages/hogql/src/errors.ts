/** Where in the query text a problem is, as the parser reports positions (0-based offsets). */
export interface Span {
  start: number;
  end: number;
}

/**
 * A query the client wrote that cannot run: bad syntax, an unknown table, field or function, a
 * construct this dialect refuses. The message names the problem and `span` where it is, so the
 * HTTP edge can answer a 400 that points at it.
 */
export class HogQLError extends Error {
  constructor(
    message: string,
    readonly code: 'hogql_syntax_error' | 'hogql_query_error',
    readonly span: Span | null = null,
  ) {
    super(span ? `${message} (at offset ${span.start})` : message);
    this.name = 'HogQLError';
  }
}

/** Where a node stands in the query text, when the parser said. */
export const spanOf = (node: { start?: { offset: number }; end?: { offset: number } }): Span | null =>
  node.start ? { start: node.start.offset, end: node.end?.offset ?? node.start.offset } : null;

export const queryError = (message: string, span: Span | null = null) => new HogQLError(message, 'hogql_query_error', span);
