import { parse as parseUuid, v5 as uuidv5 } from 'uuid';
import { IDENTIFYING_EVENTS } from './merge-plan.js';

// As bytes, parsed once: uuid parses a namespace given as text on every call, a quarter of its time.
const PERSONLESS_NAMESPACE = parseUuid('932979b4-65c3-4424-8467-0b66ec27bc22');

/** The person id of events sent without a person profile: stable per project and distinct id. */
export function personlessPersonId(teamId: number, distinctId: string): string {
  return uuidv5(`${teamId}:${distinctId}`, PERSONLESS_NAMESPACE);
}

/** Identity events make no sense without a profile, so personless ones are dropped. */
export const PERSON_EVENTS: ReadonlySet<string> = new Set([...IDENTIFYING_EVENTS, '$groupidentify', '$merge_dangerously']);

export function processesPersonProfile(properties: Record<string, unknown>): boolean {
  return properties.$process_person_profile !== false;
}

// At module level, as tsx names a closure made per call with a defineProperty call (see merge-plan.ts).
const carriesPersonUpdates = (object: object) => Object.hasOwn(object, '$set') || Object.hasOwn(object, '$set_once') || Object.hasOwn(object, '$unset');

/** A personless event keeps its properties but not the person updates it carries; copied only when it carries some. */
export function stripPersonUpdates<T extends { properties?: Record<string, unknown> | null; $set?: unknown; $set_once?: unknown; $unset?: unknown }>(event: T): T {
  if (event.properties && !carriesPersonUpdates(event) && !carriesPersonUpdates(event.properties)) return event;
  const { $set: _set, $set_once: _setOnce, $unset: _unset, ...rest } = event;
  const properties = { ...(event.properties ?? {}) };
  delete properties.$set;
  delete properties.$set_once;
  delete properties.$unset;
  return { ...rest, properties } as T;
}
