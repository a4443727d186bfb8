import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const PERSONAL_API_KEY_PREFIX = 'phx_';
export const PROJECT_API_KEY_PREFIX = 'phc_';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 43 base62 characters: about 256 bits, the same length as PostHog's keys. */
function randomToken(length = 43, random: (size: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < length) {
    for (const byte of random(length)) {
      // Rejection sampling keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export function generatePersonalApiKey(random?: (size: number) => Buffer): string {
  return PERSONAL_API_KEY_PREFIX + randomToken(43, random);
}

export function generateProjectApiKey(random?: (size: number) => Buffer): string {
  return PROJECT_API_KEY_PREFIX + randomToken(43, random);
}

/**
 * Keys are stored as HMAC-SHA256 under a server-side pepper: the database alone reveals no key,
 * and the digest is deterministic so a key can be found by it.
 */
export function hashPersonalApiKey(key: string, pepper: string): string {
  return createHmac('sha256', pepper).update(key).digest('hex');
}

export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** What people see of a key after creation: enough to recognise it, not to use it. */
export function maskKey(key: string): string {
  return `${key.slice(0, 6)}...${key.slice(-4)}`;
}
