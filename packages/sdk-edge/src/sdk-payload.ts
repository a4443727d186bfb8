import type { ParsedUrlQuery } from 'node:querystring';
import getRawBody from 'raw-body';
import { badRequest, jsonProblem, payloadTooLarge, type DirectRequest } from '@tributary/http';
import { decodeBody } from '@tributary/payload';

export type SdkQuery = Record<string, string | undefined>;

const NO_BODY = Buffer.alloc(0);

/**
 * A POST's body, read while it streams and stopped at `limit`; other methods carry their payload
 * in `?data=`. raw-body's own failures (an aborted request) reach the one error mapping as they
 * are, which answers them with a 400.
 */
export async function readSdkBody({ req, method, path }: DirectRequest, limit: number): Promise<Buffer> {
  if (method !== 'POST') return NO_BODY;
  try {
    return await getRawBody(req, { limit });
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(`Request body is larger than the limit of ${limit} bytes for ${path}.`);
    throw error;
  }
}

/** The query's single-valued parameters, as decoding reads them: a repeated one (an array) is not read. */
export function sdkQuery(parsed: ParsedUrlQuery): SdkQuery {
  const query: SdkQuery = {};
  // A null-prototype object (node:querystring's), so for-in lists its own keys only.
  for (const key in parsed) {
    const value = parsed[key];
    if (typeof value === 'string') query[key] = value;
  }
  return query;
}

/**
 * The request's payload as JSON, with the text it was parsed from. A payload that cannot be
 * decoded is a 400 (413 past `maxBytes` once decompressed); one nested deeper than
 * `MAX_JSON_DEPTH` too, as every reader after this one would spend stack on it.
 */
export function decodeSdkPayload({ req }: DirectRequest, body: Buffer, query: SdkQuery, maxBytes: number): { value: unknown; text: string } {
  const decoded = decodeBody({ body, contentType: req.headers['content-type'], contentEncoding: req.headers['content-encoding'], query }, { maxBytes });
  if (!decoded.ok) throw decoded.error.kind === 'too_large' ? payloadTooLarge(decoded.error.detail) : badRequest(decoded.error.detail, null, decoded.error.kind);
  const nested = jsonProblem(decoded.value);
  if (nested) throw badRequest(nested.detail, nested.attr, 'invalid_payload');
  return decoded;
}
