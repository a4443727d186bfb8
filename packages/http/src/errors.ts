/**
 * The one error shape every HTTP service answers with, as PostHog's API does:
 * `{type, code, detail, attr}`. Throw an `HttpError` for expected failures; anything else is
 * logged and answered as a generic 500 without internal details.
 */
export type ErrorType = 'invalid_request' | 'authentication_error' | 'permission_denied' | 'throttled' | 'server_error';

export interface ErrorBody {
  type: ErrorType;
  code: string;
  detail: string;
  attr: string | null;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    /** Extra response headers, such as Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'HttpError';
  }

  toBody(): ErrorBody {
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr };
  }
}

export const badRequest = (detail: string, attr: string | null = null, code = 'invalid_input') =>
  new HttpError(400, 'invalid_request', code, detail, attr);
export const unauthorized = (detail: string, code = 'authentication_failed') =>
  new HttpError(401, 'authentication_error', code, detail);
export const forbidden = (detail: string, code = 'permission_denied') => new HttpError(403, 'permission_denied', code, detail);
export const notFound = (detail = 'Not found.') => new HttpError(404, 'invalid_request', 'not_found', detail);
export const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  new HttpError(405, 'invalid_request', 'method_not_allowed', `Method ${method} is not allowed here; use ${allowed.join(', ')}.`, null, { Allow: allowed.join(', ') });
export const payloadTooLarge = (detail: string) => new HttpError(413, 'invalid_request', 'payload_too_large', detail);
export const unsupportedMediaType = (detail: string) => new HttpError(415, 'invalid_request', 'unsupported_media_type', detail);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(429, 'throttled', 'throttled', `Request was throttled. Expected available in ${retryAfterSeconds} seconds.`, null, {
    'Retry-After': String(retryAfterSeconds),
  });
export const serviceUnavailable = (detail: string) => new HttpError(503, 'server_error', 'service_unavailable', detail);

export const internalErrorBody: ErrorBody = {
  type: 'server_error',
  code: 'error',
  detail: 'A server error occurred.',
  attr: null,
};
