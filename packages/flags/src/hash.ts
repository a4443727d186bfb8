import { createHash } from 'node:crypto';

const LONG_SCALE = 0xfffffffffffffff;

/**
 * PostHog's bucket for an id: the first 15 hex digits of sha1(`key.id` + salt) over 16^15 - 1,
 * computed in doubles exactly as posthog-node does, so buckets match to the last bit.
 */
export function hashFor(flagKey: string, id: string, salt = ''): number {
  const digest = createHash('sha1').update(`${flagKey}.${id}${salt}`, 'utf8').digest('hex');
  return parseInt(digest.slice(0, 15), 16) / LONG_SCALE;
}

/** Holdouts hash the id under a fixed `holdout-` prefix instead of the flag key. */
export function holdoutHash(id: string, salt = ''): number {
  const digest = createHash('sha1').update(`holdout-${id}${salt}`, 'utf8').digest('hex');
  return parseInt(digest.slice(0, 15), 16) / LONG_SCALE;
}
