/**
 * A destination that failed. The message names the destination and the cause, as the run stores
 * it for the user to read; `retryable` says whether trying the part again may succeed.
 */
export class ExportError extends Error {
  readonly retryable: boolean = true;

  constructor(
    readonly destination: string,
    cause: string,
    options?: { cause?: unknown },
  ) {
    super(`${destination}: ${cause}`, options);
    this.name = 'ExportError';
  }
}

/** Trying again cannot help (bad credentials, a missing bucket or table, a refused request): the run fails at once. */
export class NonRetryableExportError extends ExportError {
  override readonly retryable = false;

  constructor(destination: string, cause: string, options?: { cause?: unknown }) {
    super(destination, cause, options);
    this.name = 'NonRetryableExportError';
  }
}

/**
 * The most telling words an error carries: Node's network errors often have only a code, and
 * fetch puts the reason in `cause` behind a bare "fetch failed". Read by shape, not `instanceof`,
 * as errors from Node's internals may come from another realm (jest's VM contexts).
 */
export function describeCause(error: unknown): string {
  if (typeof error !== 'object' || error === null || !('message' in error)) return String(error);
  const { message, code, cause, errors, name } = error as { message: unknown; code?: unknown; cause?: unknown; errors?: unknown; name?: unknown };
  const text = String(message);
  const nested = Array.isArray(errors) ? errors.map(describeCause).join('; ') : cause === undefined ? '' : describeCause(cause);
  const words = [text, nested, typeof code === 'string' && !text.includes(code) && !nested.includes(code) ? code : ''].filter(Boolean);
  return words.length > 0 ? words.join(': ') : String(name);
}
