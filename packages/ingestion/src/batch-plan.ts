import { mergeIdsOf } from './merge-plan.js';
import { processesPersonProfile } from './personless.js';

export interface BatchEvent {
  teamId: number;
  event: string;
  distinctId: string;
  properties: Record<string, unknown>;
}

/** Events that can change which person a distinct id belongs to, or mark a person identified. */
const IDENTITY_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously']);

/**
 * Splits a partition's batch into events whose persons can be changed together in one
 * transaction and events that must go one by one. Only the order of one distinct id's events
 * matters (Kafka orders nothing else), so every event of a distinct id that an identity event
 * touches, or that sends personless events, goes one by one, in batch order; the rest go together.
 */
export function planBatch(events: readonly BatchEvent[]): { together: number[]; oneByOne: number[] } {
  const key = (teamId: number, distinctId: string) => `${teamId}\u0000${distinctId}`;
  const sequential = new Set<string>();
  for (const e of events) {
    const link = mergeIdsOf(e.event, e.distinctId, e.properties);
    if (IDENTITY_EVENTS.has(e.event) || link || !processesPersonProfile(e.properties)) {
      sequential.add(key(e.teamId, e.distinctId));
      if (link) {
        sequential.add(key(e.teamId, link.intoId));
        sequential.add(key(e.teamId, link.otherId));
      }
    }
  }
  const together: number[] = [];
  const oneByOne: number[] = [];
  events.forEach((e, i) => (sequential.has(key(e.teamId, e.distinctId)) ? oneByOne : together).push(i));
  return { together, oneByOne };
}
