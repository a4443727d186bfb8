import { gunzipSync } from 'node:zlib';
import LZString from 'lz-string';

export type DecodeErrorKind = 'invalid_payload' | 'too_large' | 'empty';

/** `text` is the JSON text `value` was parsed from, once decompressed and decoded. */
export type DecodeResult = { ok: true; value: unknown; text: string } | { ok: false; error: { kind: DecodeErrorKind; detail: string } };

export interface RawRequest {
  body: Buffer;
  contentType?: string | undefined;
  contentEncoding?: string | undefined;
  query: Record<string, string | undefined>;
}

const GZIP_MAGIC = [0x1f, 0x8b, 0x08];
const BASE64 = /^[A-Za-z0-9+/\-_\s]+={0,2}\s*$/;

type Compression = 'gzip' | 'lz64' | 'base64' | 'none';

function compressionOf(hint: string | undefined): Compression | null {
  switch (hint?.trim().toLowerCase()) {
    case 'gzip':
    case 'gzip-js':
      return 'gzip';
    case 'lz64':
    case 'lz-string':
      return 'lz64';
    case 'base64':
    case 'b64':
      return 'base64';
    case undefined:
    case '':
      return null;
    default:
      return 'none';
  }
}

const fail = (kind: DecodeErrorKind, detail: string): DecodeResult => ({ ok: false, error: { kind, detail } });
// At module level: tsx names a closure made inside decodeBody with a defineProperty call on every request.
const tooLarge = (maxBytes: number) => fail('too_large', `Payload is larger than the limit of ${maxBytes} bytes once decompressed.`);

function isGzip(bytes: Buffer): boolean {
  return GZIP_MAGIC.every((b, i) => bytes[i] === b);
}

/** Form fields of an `application/x-www-form-urlencoded` body, where `+` is a space. */
function formFields(body: Buffer): URLSearchParams {
  return new URLSearchParams(body.toString('latin1'));
}

/**
 * Turns a capture request into its JSON value, the way PostHog's capture reads it: the payload
 * is `?data=` or the body (a form's `data` field); the compression hint is the first of
 * `?compression=`, the form's `compression` and `Content-Encoding`; gzip is also recognised by
 * its magic bytes, and a body that is entirely base64 is decoded first. `maxBytes` bounds the
 * payload after decompression, so a small compressed body cannot expand without limit.
 */
export function decodeBody(request: RawRequest, limits: { maxBytes: number }): DecodeResult {
  const { query } = request;
  let payload: Buffer;
  let formCompression: string | undefined;
  const isForm = (request.contentType ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
  if (query.data !== undefined && query.data !== '') {
    payload = Buffer.from(query.data, 'latin1');
  } else if (isForm) {
    const fields = formFields(request.body);
    const data = fields.get('data');
    if (data === null) return fail('invalid_payload', 'Form-encoded body has no data field.');
    payload = Buffer.from(data, 'latin1');
    formCompression = fields.get('compression') ?? undefined;
  } else {
    payload = request.body;
  }
  if (payload.length === 0) return fail('empty', 'Request has no payload: send events in the body or in ?data=.');

  let compression = compressionOf(query.compression) ?? compressionOf(formCompression) ?? compressionOf(request.contentEncoding) ?? 'none';
  if (compression === 'none' && isGzip(payload)) compression = 'gzip';

  // Base64 and plain text are never longer than their payload, and gunzip stops at the limit, so
  // only lz-string output needs measuring: no second pass over a large text.
  if ((compression === 'none' || compression === 'base64') && payload.length > limits.maxBytes) return tooLarge(limits.maxBytes);
  let text: string;
  try {
    switch (compression) {
      case 'gzip':
        text = gunzipSync(payload, { maxOutputLength: limits.maxBytes }).toString('utf8');
        break;
      case 'lz64': {
        const decompressed = LZString.decompressFromBase64(payload.toString('latin1').trim());
        if (!decompressed) return fail('invalid_payload', 'Payload is not valid lz-string base64 (compression lz64).');
        if (Buffer.byteLength(decompressed, 'utf8') > limits.maxBytes) return tooLarge(limits.maxBytes);
        text = decompressed;
        break;
      }
      case 'base64':
        text = Buffer.from(payload.toString('latin1'), 'base64').toString('utf8');
        break;
      case 'none':
        text = payload.toString('utf8');
        if (!/^\s*[[{]/.test(text) && BASE64.test(text)) {
          const decoded = Buffer.from(text, 'base64');
          text = isGzip(decoded) ? gunzipSync(decoded, { maxOutputLength: limits.maxBytes }).toString('utf8') : decoded.toString('utf8');
        }
        break;
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || (error as Error).message.includes('maxOutputLength')) {
      return tooLarge(limits.maxBytes);
    }
    return fail('invalid_payload', `Payload could not be decompressed as ${compression}: ${(error as Error).message}.`);
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown, text };
  } catch (error) {
    return fail('invalid_payload', `Payload is not valid JSON: ${(error as Error).message}.`);
  }
}
