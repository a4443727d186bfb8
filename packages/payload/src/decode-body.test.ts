import { gzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { decodeBody } from './decode-body.js';

const limits = { maxBytes: 10_000 };
const event = { event: 'clicked', distinct_id: 'u1', api_key: 'phc_x' };
const json = JSON.stringify(event);
const decode = (body: Buffer | string, extra: Partial<Parameters<typeof decodeBody>[0]> = {}) =>
  decodeBody({ body: Buffer.isBuffer(body) ? body : Buffer.from(body), query: {}, ...extra }, limits);

describe('decodeBody', () => {
  it('reads a plain JSON body', () => {
    expect(decode(json)).toEqual({ ok: true, value: event, text: json });
  });

  it('reads gzip announced by Content-Encoding, as posthog-node 5 sends /batch/', () => {
    expect(decode(gzipSync(json), { contentEncoding: 'gzip' })).toEqual({ ok: true, value: event, text: json });
  });

  it('reads gzip announced by ?compression=gzip-js, as posthog-js sends it', () => {
    expect(decode(gzipSync(json), { query: { compression: 'gzip-js' }, contentType: 'text/plain' })).toEqual({ ok: true, value: event, text: json });
  });

  it('recognises gzip by its magic bytes without any hint', () => {
    expect(decode(gzipSync(json))).toEqual({ ok: true, value: event, text: json });
  });

  it('reads lz-string base64 (lz64)', () => {
    const body = LZString.compressToBase64(json);
    expect(decode(body, { query: { compression: 'lz64' } })).toEqual({ ok: true, value: event, text: json });
  });

  it('reads a form-encoded data field with its own compression field', () => {
    const form = new URLSearchParams({ data: LZString.compressToBase64(json), compression: 'lz64' }).toString();
    expect(decode(form, { contentType: 'application/x-www-form-urlencoded' })).toEqual({ ok: true, value: event, text: json });
  });

  it('reads a form-encoded base64 data field, as old posthog-js sends it', () => {
    const form = new URLSearchParams({ data: Buffer.from(json).toString('base64') }).toString();
    expect(decode(form, { contentType: 'application/x-www-form-urlencoded' })).toEqual({ ok: true, value: event, text: json });
  });

  it('prefers ?data= over the body', () => {
    expect(decode('{"event":"ignored"}', { query: { data: Buffer.from(json).toString('base64') } })).toEqual({ ok: true, value: event, text: json });
  });

  it('decodes a body that is entirely base64', () => {
    expect(decode(Buffer.from(json).toString('base64'))).toEqual({ ok: true, value: event, text: json });
  });

  it('the query hint wins over the header', () => {
    expect(decode(Buffer.from(json).toString('base64'), { query: { compression: 'base64' }, contentEncoding: 'gzip' })).toEqual({ ok: true, value: event, text: json });
  });

  it('gives the decoded JSON text beside its value, whitespace and escapes as they were sent', () => {
    const sent = ' {\n  "event": "cl\\u0069cked",\t"distinct_id": "u1", "api_key": "phc_x"\r\n}\n';
    expect(decode(gzipSync(sent), { contentEncoding: 'gzip' })).toEqual({ ok: true, value: event, text: sent });
    expect(decode(LZString.compressToBase64(sent), { query: { compression: 'lz64' } })).toEqual({ ok: true, value: event, text: sent });
  });

  it('rejects what is not JSON, saying so', () => {
    const result = decode('{"event":');
    expect(result).toMatchObject({ ok: false, error: { kind: 'invalid_payload', detail: expect.stringMatching(/not valid JSON/) } });
  });

  it('rejects corrupt gzip', () => {
    expect(decode(Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2, 3]))).toMatchObject({ ok: false, error: { kind: 'invalid_payload' } });
  });

  it('rejects an empty payload', () => {
    expect(decode('')).toMatchObject({ ok: false, error: { kind: 'empty' } });
  });

  it('rejects a form without a data field', () => {
    expect(decode('x=1', { contentType: 'application/x-www-form-urlencoded' })).toMatchObject({ ok: false, error: { kind: 'invalid_payload', detail: expect.stringMatching(/data field/) } });
  });

  it('applies the size limit after decompression, so a gzip bomb is refused', () => {
    const bomb = gzipSync(Buffer.alloc(1_000_000, 0x20));
    expect(bomb.length).toBeLessThan(limits.maxBytes);
    expect(decode(bomb, { contentEncoding: 'gzip' })).toMatchObject({ ok: false, error: { kind: 'too_large' } });
    const lz = LZString.compressToBase64(JSON.stringify({ pad: 'x'.repeat(50_000) }));
    expect(decode(lz, { query: { compression: 'lz64' } })).toMatchObject({ ok: false, error: { kind: 'too_large' } });
  });
});
