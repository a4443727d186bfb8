import { sha1Leading60Bits } from './sha1.js';

const LONG_SCALE = 0xfffffffffffffff;

/**
 * PostHog's bucket for an id: the first 15 hex digits of sha1(`key.id` + salt) over 16^15 - 1,
 * computed in doubles exactly as posthog-node does, so buckets match to the last bit.
 */
export function hashFor(flagKey: string, id: string, salt = ''): number {
  return sha1Leading60Bits(`${flagKey}.${id}${salt}`) / LONG_SCALE;
}

/** Holdouts hash the id under a fixed `holdout-` prefix instead of the flag key. */
export function holdoutHash(id: string, salt = ''): number {
  return sha1Leading60Bits(`holdout-${id}${salt}`) / LONG_SCALE;
}
