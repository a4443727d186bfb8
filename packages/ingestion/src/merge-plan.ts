import { isIllegalDistinctId } from './illegal-distinct-id.js';
import type { Properties } from './person-property-updates.js';

export interface PersonSnapshot {
  id: number;
  properties: Properties;
  isIdentified: boolean;
  createdAt: Date;
  version: number;
}

export interface MergeRequest {
  /** The id whose person survives. */
  intoId: string;
  /** The id merged into it. */
  otherId: string;
  into: PersonSnapshot | null;
  other: PersonSnapshot | null;
}

export type MergePlan =
  | { kind: 'none' }
  | { kind: 'refused'; warning: 'cannot_merge_with_illegal_distinct_id' | 'cannot_merge_already_identified'; details: Record<string, unknown> }
  | { kind: 'create'; distinctIds: [string, string] }
  | { kind: 'attach'; person: PersonSnapshot; distinctId: string }
  | { kind: 'merge'; survivor: PersonSnapshot; loser: PersonSnapshot; properties: Properties; createdAt: Date; version: number };

/**
 * What `$identify` (anon id into the distinct id) and `$create_alias` ask of two distinct ids,
 * following PostHog's rules: illegal ids never merge; two unknown ids become one identified
 * person; a known and an unknown id join; two persons merge unless the one to be absorbed is
 * already identified, which would join two real people.
 */
export function planMerge(request: MergeRequest): MergePlan {
  const { intoId, otherId, into, other } = request;
  if (intoId === otherId) return { kind: 'none' };
  for (const id of [intoId, otherId]) {
    if (isIllegalDistinctId(id)) return { kind: 'refused', warning: 'cannot_merge_with_illegal_distinct_id', details: { illegalDistinctId: id, intoId, otherId } };
  }
  if (!into && !other) return { kind: 'create', distinctIds: [intoId, otherId] };
  if (into && !other) return { kind: 'attach', person: into, distinctId: otherId };
  if (!into && other) return { kind: 'attach', person: other, distinctId: intoId };
  if (into!.id === other!.id) return { kind: 'none' };
  if (other!.isIdentified) {
    return { kind: 'refused', warning: 'cannot_merge_already_identified', details: { sourcePersonDistinctId: otherId, targetPersonDistinctId: intoId } };
  }
  return {
    kind: 'merge',
    survivor: into!,
    loser: other!,
    properties: { ...other!.properties, ...into!.properties },
    createdAt: other!.createdAt < into!.createdAt ? other!.createdAt : into!.createdAt,
    version: Math.max(into!.version, other!.version) + 1,
  };
}

/** Events that link two distinct ids and mark their person identified. */
export const IDENTIFYING_EVENTS: ReadonlySet<string> = new Set(['$identify', '$create_alias']);

// At module level, not per event: tsx names every closure made inside a function with a
// defineProperty call each time it is made.
const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : null);

/** The two distinct ids an identity event links: `intoId`'s person is the one that survives. */
export interface MergeIds {
  intoId: string;
  otherId: string;
}

/** The two ids an identity event links; null for other events. */
export function mergeIdsOf(event: string, distinctId: string, properties: Properties): MergeIds | null {
  if (event === '$identify') {
    const anon = text(properties.$anon_distinct_id);
    return anon === null ? null : { intoId: distinctId, otherId: anon };
  }
  if (event === '$create_alias') {
    // As PostHog does (and the reference says): the alias's person is merged into the event's
    // distinct id's person. Both ids end up on one person either way; this decides which person
    // record survives and whose identified flag can refuse the merge. An identified user who
    // aliases an id that already has an anonymous person of its own (its events reached ingest
    // first, from another partition) must still be joined with it, which the other way round
    // refused (found by the chaos suite).
    const alias = text(properties.alias);
    return alias === null ? null : { intoId: distinctId, otherId: alias };
  }
  return null;
}
