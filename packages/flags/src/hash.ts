import { hash } from 'node:crypto';

const LONG_SCALE = 0xfffffffffffffff;

/**
 * PostHog's bucket for an id: the first 15 hex digits of sha1(`key.id` + salt) over 16^15 - 1,
 * computed in doubles exactly as posthog-node does, so buckets match to the last bit.
 */
export function hashFor(flagKey: string, id: string, salt = ''): number {
  // The one-shot `hash` costs half of a `createHash` object, and decide hashes once per flag.
  const digest = hash('sha1', `${flagKey}.${id}${salt}`, 'hex');
  return parseInt(digest.slice(0, 15), 16) / LONG_SCALE;
}

/** Holdouts hash the id under a fixed `holdout-` prefix instead of the flag key. */
export function holdoutHash(id: string, salt = ''): number {
  const digest = hash('sha1', `holdout-${id}${salt}`, 'hex');
  return parseInt(digest.slice(0, 15), 16) / LONG_SCALE;
}
