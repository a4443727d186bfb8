import { sha1Leading60Bits } from './sha1.js';

const LONG_SCALE = 0xfffffffffffffff;

/** An id as a template literal writes it: request JSON may carry a group key as a number. */
const text = (id: unknown): string => (typeof id === 'string' ? id : `${id as string}`);

/**
 * PostHog's bucket for an id: the first 15 hex digits of sha1(`key.id` + salt) over 16^15 - 1,
 * computed in doubles exactly as posthog-node does, so buckets match to the last bit.
 */
export function hashFor(flagKey: string, id: string, salt = ''): number {
  return prefixedHash(`${flagKey}.`, id, salt);
}

/** `hashFor` with the `key.` prefix given: flag plans build it once, not per evaluation. */
export function prefixedHash(prefix: string, id: string, salt: string): number {
  return sha1Leading60Bits(prefix, text(id), salt) / LONG_SCALE;
}

/** Holdouts hash the id under a fixed `holdout-` prefix instead of the flag key. */
export function holdoutHash(id: string, salt = ''): number {
  return sha1Leading60Bits('holdout-', text(id), salt) / LONG_SCALE;
}
