import type { ChunkEvent } from './person-chunk.js';

export interface GroupableEvent {
  teamId: number;
  event: ChunkEvent;
}

/**
 * Splits a chunk's events into groups that touch disjoint sets of persons: two events share a
 * group when they name a common distinct id, counting both ids an `$identify` or
 * `$create_alias` links. Each group keeps its events in chunk order; no event of one group can
 * change the outcome of another's, so groups may be applied in any order or together.
 * Returns event indexes, groups ordered by their first event.
 */
export function groupByPersons(events: readonly GroupableEvent[]): number[][] {
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.get(root) !== root) root = parent.get(root)!;
    // Path compression keeps chains of aliases short.
    for (let at = key; at !== root; ) {
      const next = parent.get(at)!;
      parent.set(at, root);
      at = next;
    }
    return root;
  };
  const add = (key: string) => {
    if (!parent.has(key)) parent.set(key, key);
  };
  const union = (a: string, b: string) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(rb, ra);
  };
  const keyOf = (teamId: number, distinctId: string) => `${teamId}\u0000${distinctId}`;

  for (const { teamId, event } of events) {
    const own = keyOf(teamId, event.distinctId);
    add(own);
    if (event.personless || !event.link) continue;
    for (const id of [event.link.intoId, event.link.otherId]) {
      add(keyOf(teamId, id));
      union(own, keyOf(teamId, id));
    }
  }

  const groups = new Map<string, number[]>();
  events.forEach((e, i) => {
    const root = find(keyOf(e.teamId, e.event.distinctId));
    const group = groups.get(root);
    if (group) group.push(i);
    else groups.set(root, [i]);
  });
  return [...groups.values()];
}
