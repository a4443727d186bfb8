import { badRequest, type HttpError } from './errors.js';

/**
 * A `format` query parameter the endpoint cannot answer in, as the 400 naming it; null when the
 * answer may be given (no `format`, or one of `formats`). Answering JSON to `format=xml` would
 * hand a client something other than what it asked for, without saying so.
 */
export function formatProblem(format: unknown, formats: readonly string[]): HttpError | null {
  if (format === undefined || format === '' || (typeof format === 'string' && formats.includes(format))) return null;
  const asked = typeof format === 'string' ? `"${format}"` : 'given more than once';
  return badRequest(`format ${asked} is not available here: ask for one of ${formats.join(', ')}, or leave it out for JSON.`, 'format', 'invalid_format');
}
