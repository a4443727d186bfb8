/**
 * SHA-1 of a string's UTF-8 bytes, giving only the leading 60 bits PostHog's buckets read.
 * Decide hashes 30 to 50 short strings per request; node:crypto's one-shot `hash` spends more
 * on crossing into C++ and on its hex string than on the digest itself, enough to be most of the
 * flag engine's time, while this stays in optimised JS on preallocated buffers.
 * The text comes in three parts (flag key prefix, id, salt) so that no string is built per hash,
 * and the usual case, ASCII text of one block, is packed straight into the message words.
 * The flags tests check it against node:crypto bit for bit.
 */

/** The round constants, as the signed 32-bit values the arithmetic below works in. */
const K0 = 0x5a827999;
const K20 = 0x6ed9eba1;
const K40 = 0x8f1bbcdc | 0;
const K60 = 0xca62c1d6 | 0;

const H0 = 0x67452301;
const H1 = 0xefcdab89 | 0;
const H2 = 0x98badcfe | 0;
const H3 = 0x10325476;
const H4 = 0xc3d2e1f0 | 0;

const schedule = new Int32Array(80);
const state = new Int32Array(5);
const encoder = new TextEncoder();
/** Message bytes with their padding, for text longer than a block or beyond ASCII; grown as needed, never shrunk. */
let message = new Uint8Array(256);

/** ASCII bytes that fit one block with SHA-1's padding (0x80 and the 8-byte length). */
const ONE_BLOCK = 55;

/** Packs `text` big-endian into the schedule's words from byte `at`; the end offset, or -1 at a character beyond ASCII. */
function pack(text: string, at: number): number {
  const w = schedule;
  for (let i = 0; i < text.length; i++, at++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return -1;
    w[at >>> 2] = w[at >>> 2]! | (c << (24 - ((at & 3) << 3)));
  }
  return at;
}

/** Runs one block, whose 16 words are in the schedule, into the state. */
function compress(): void {
  const w = schedule;
  for (let i = 16; i < 80; i++) {
    const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
    w[i] = (x << 1) | (x >>> 31);
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  // Four rounds of 20 steps, each with its own function and constant: a loop each, no branch per step.
  for (let i = 0; i < 20; i++) {
    const t = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + K0 + e + w[i]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  for (let i = 20; i < 40; i++) {
    const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + K20 + e + w[i]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  for (let i = 40; i < 60; i++) {
    const t = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + K40 + e + w[i]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  for (let i = 60; i < 80; i++) {
    const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + K60 + e + w[i]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
}

/** Writes the UTF-8 bytes of `text` into `message` (grown as needed) and returns their count. */
function encode(text: string): number {
  // Three bytes per UTF-16 unit at most, plus SHA-1's padding of at most 72.
  if (text.length * 3 + 72 > message.length) message = new Uint8Array(text.length * 3 + 72);
  const out = message;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return encoder.encodeInto(text, out).written;
    out[i] = c;
  }
  return text.length;
}

/** Any text: its UTF-8 bytes padded in `message`, then block by block. */
function digestBytes(text: string): void {
  const length = encode(text);
  const bytes = message;
  const blocks = ((length + 8) >>> 6) + 1;
  const end = blocks * 64;
  bytes[length] = 0x80;
  bytes.fill(0, length + 1, end - 4);
  // The length in bits as a 64-bit big-endian number; inputs here are far below 2^29 bytes.
  const bits = length * 8;
  bytes[end - 4] = bits >>> 24;
  bytes[end - 3] = (bits >>> 16) & 0xff;
  bytes[end - 2] = (bits >>> 8) & 0xff;
  bytes[end - 1] = bits & 0xff;
  const w = schedule;
  for (let offset = 0; offset < end; offset += 64) {
    for (let i = 0; i < 16; i++) {
      const at = offset + i * 4;
      w[i] = (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
    }
    compress();
  }
}

/** ASCII text of one block, packed straight into the words; false, before any round, at a character beyond ASCII. */
function digestOneBlock(head: string, body: string, tail: string): boolean {
  const w = schedule;
  for (let i = 0; i < 16; i++) w[i] = 0;
  let at = pack(head, 0);
  if (at >= 0) at = pack(body, at);
  if (at >= 0) at = pack(tail, at);
  if (at < 0) return false;
  w[at >>> 2] = w[at >>> 2]! | (0x80 << (24 - ((at & 3) << 3)));
  w[15] = at * 8;
  compress();
  return true;
}

/**
 * The first 15 hex digits of the SHA-1 digest of `head + body + tail`, read as an integer: what
 * `parseInt(hex.slice(0, 15), 16)` gives, rounded to a double the same way (one rounding of
 * the exact 60-bit value, as parseInt does for a radix that is a power of two).
 */
export function sha1Leading60Bits(head: string, body = '', tail = ''): number {
  state[0] = H0;
  state[1] = H1;
  state[2] = H2;
  state[3] = H3;
  state[4] = H4;
  if (head.length + body.length + tail.length > ONE_BLOCK || !digestOneBlock(head, body, tail)) digestBytes(head + body + tail);
  // 32 bits of h0, then the top 28 of h1: 60 bits, added in one correctly rounded step.
  return (state[0]! >>> 0) * 2 ** 28 + (state[1]! >>> 4);
}
