import { IDENTIFYING_EVENTS, mergeIdsOf, planMerge, type MergeIds, type PersonSnapshot } from './merge-plan.js';
import type { RawEvent } from './parse-event.js';
import { applyPersonUpdates, extractPersonUpdates, initialPersonProperties, type PersonUpdates, type Properties } from './person-property-updates.js';
import { personlessPersonId, processesPersonProfile } from './personless.js';

/**
 * One event of a project's chunk, ready for its person: only what applying it reads (see
 * `chunkEventOf`), not the event's properties, so that a chunk's parsed events need not outlive
 * their parsing.
 */
export type ChunkEvent =
  | {
      /** `$process_person_profile: false`: the event reads its person but never creates or changes one. */
      personless: true;
      distinctId: string;
      timestamp: Date;
    }
  | {
      personless: false;
      event: string;
      distinctId: string;
      /** What an `$identify` or `$create_alias` links (`mergeIdsOf`); null for other events. */
      link: MergeIds | null;
      updates: PersonUpdates;
      timestamp: Date;
    };

/** What applying an event to its person reads of it, worked out once however often the chunk is applied. */
export function chunkEventOf(event: RawEvent, timestamp: Date): ChunkEvent {
  if (!processesPersonProfile(event.properties)) return { personless: true, distinctId: event.distinct_id, timestamp };
  return {
    personless: false,
    event: event.event,
    distinctId: event.distinct_id,
    link: mergeIdsOf(event.event, event.distinct_id, event.properties),
    updates: extractPersonUpdates(event),
    timestamp,
  };
}

/** A person as stored before the chunk; `id` is the store's own. */
export interface StoredPerson {
  id: number;
  uuid: string;
  properties: Properties;
  isIdentified: boolean;
  createdAt: Date;
  version: number;
}

export interface ChunkState {
  teamId: number;
  /** The stored person of every distinct id the chunk names that has one. */
  persons: ReadonlyMap<string, StoredPerson>;
  /** Version a new row for this distinct id must start at (above a deleted person's tombstone). */
  distinctIdStartVersion: (distinctId: string) => number;
  /** Version a new person with this uuid must start at. */
  personStartVersion: (uuid: string) => number;
}

/** A person as the chunk leaves it. Persons created here have a negative `id` until stored. */
export interface ChunkPerson extends StoredPerson {
  created: boolean;
  changed: boolean;
  deleted: boolean;
  /** Set when merged away: the person that absorbed this one. */
  mergedInto: number | null;
}

/** The person an event row records: as it is right after the event. */
export interface PersonAfterEvent {
  uuid: string;
  properties: Properties;
  createdAt: Date;
}

/** `P` is what the caller keeps of the person after the event (see `applyChunk`). */
export interface EventOutcome<P = PersonAfterEvent> {
  person: P;
  warnings: readonly { type: string; details: Record<string, unknown> }[];
}

/** The warnings of an event that has none, as nearly every event: shared, and never added to. */
export const NO_WARNINGS: EventOutcome['warnings'] = Object.freeze([]);

export interface ChunkResult<P = PersonAfterEvent> {
  outcomes: EventOutcome<P>[];
  /** Every person the chunk created, changed or deleted, in its final state. */
  persons: ChunkPerson[];
  /** Distinct ids that had no person before the chunk, in the order they were claimed, with the (temporary or stored) id of their final person. */
  newDistinctIds: { distinctId: string; personId: number; version: number }[];
  /** Stored persons merged away: all their distinct ids, named here or not, move to `into`. */
  moves: { from: number; into: number }[];
  /** Merges for the activity log; the store adds the loser's distinct ids the chunk did not name. */
  merges: { survivorId: number; loserId: number; loserUuid: string; distinctIds: string[] }[];
}

/**
 * Applies a chunk of one project's events to its persons in memory, in order, with the same
 * rules as applying them one at a time (identify and alias merges, `$set`, `$set_once`, `$unset`,
 * personless reads), and says what the store must do to end in the same state. Versions rise by
 * one per change as they would one event at a time, so copies written from the final state
 * win over any older copy.
 *
 * Each event's outcome keeps what `keep` makes of its person as the event left it, taken as the
 * event is applied: nearly every event changes its person (device and page properties are set
 * each time), so outcomes that kept the properties themselves would keep one copy of them per
 * event for as long as the caller keeps the outcomes.
 */
export function applyChunk<P>(state: ChunkState, events: readonly ChunkEvent[], keep: (person: PersonAfterEvent) => P): ChunkResult<P> {
  const persons = new Map<number, ChunkPerson>();
  const owner = new Map<string, number>();
  const idsOf = new Map<number, Set<string>>();
  for (const [distinctId, stored] of state.persons) {
    if (!persons.has(stored.id)) {
      const { id, uuid, properties, isIdentified, createdAt, version } = stored;
      persons.set(id, { id, uuid, properties, isIdentified, createdAt, version, created: false, changed: false, deleted: false, mergedInto: null });
    }
    owner.set(distinctId, stored.id);
    idsOf.set(stored.id, (idsOf.get(stored.id) ?? new Set()).add(distinctId));
  }
  const newIds = new Set<string>();
  const result: ChunkResult<P> = { outcomes: [], persons: [], newDistinctIds: [], moves: [], merges: [] };
  let nextTemporaryId = -1;

  const personOf = (distinctId: string): ChunkPerson | undefined => {
    const id = owner.get(distinctId);
    return id === undefined ? undefined : persons.get(id);
  };
  const claim = (distinctId: string, personId: number) => {
    owner.set(distinctId, personId);
    idsOf.set(personId, (idsOf.get(personId) ?? new Set()).add(distinctId));
    newIds.add(distinctId);
  };
  /** The new person's uuid derives from the event's own distinct id, as it would one event at a time. */
  const create = (uuidFrom: string, distinctIds: readonly string[], properties: Properties, isIdentified: boolean, createdAt: Date): ChunkPerson => {
    const uuid = personlessPersonId(state.teamId, uuidFrom);
    const person: ChunkPerson = {
      id: nextTemporaryId--,
      uuid,
      properties,
      isIdentified,
      createdAt,
      version: state.personStartVersion(uuid),
      created: true,
      changed: true,
      deleted: false,
      mergedInto: null,
    };
    persons.set(person.id, person);
    for (const id of distinctIds) claim(id, person.id);
    return person;
  };
  const snapshot = (p: ChunkPerson | undefined): PersonSnapshot | null =>
    p ? { id: p.id, properties: p.properties, isIdentified: p.isIdentified, createdAt: p.createdAt, version: p.version } : null;
  const outcome = (p: ChunkPerson, warnings: EventOutcome['warnings']): EventOutcome<P> => ({
    person: keep({ uuid: p.uuid, properties: p.properties, createdAt: p.createdAt }),
    warnings,
  });

  for (const e of events) {
    // Shared by the events that get none, nearly all; never added to.
    let warnings: EventOutcome['warnings'] = NO_WARNINGS;
    if (e.personless) {
      const existing = personOf(e.distinctId);
      result.outcomes.push(
        existing ? outcome(existing, warnings) : { person: keep({ uuid: personlessPersonId(state.teamId, e.distinctId), properties: {}, createdAt: e.timestamp }), warnings },
      );
      continue;
    }
    const identify = IDENTIFYING_EVENTS.has(e.event);
    let person = personOf(e.distinctId);

    if (e.link) {
      const { intoId, otherId } = e.link;
      const plan = planMerge({ intoId, otherId, into: snapshot(personOf(intoId)), other: snapshot(personOf(otherId)) });
      if (plan.kind === 'refused') warnings = [{ type: plan.warning, details: plan.details }];
      else if (plan.kind === 'create') {
        result.outcomes.push(outcome(create(e.distinctId, plan.distinctIds, initialPersonProperties(e.updates), true, e.timestamp), warnings));
        continue;
      } else if (plan.kind === 'attach') {
        claim(plan.distinctId, plan.person.id);
        person = persons.get(plan.person.id)!;
      } else if (plan.kind === 'merge') {
        const survivor = persons.get(plan.survivor.id)!;
        const loser = persons.get(plan.loser.id)!;
        const moved = [...(idsOf.get(loser.id) ?? [])];
        for (const id of moved) owner.set(id, survivor.id);
        idsOf.set(survivor.id, new Set([...(idsOf.get(survivor.id) ?? []), ...moved]));
        idsOf.delete(loser.id);
        Object.assign(loser, { deleted: true, changed: true, mergedInto: survivor.id, version: loser.version + 1 });
        Object.assign(survivor, { properties: plan.properties, createdAt: plan.createdAt, version: plan.version, changed: true });
        result.merges.push({ survivorId: survivor.id, loserId: loser.id, loserUuid: loser.uuid, distinctIds: moved });
        person = survivor;
      }
    }

    if (!person) {
      result.outcomes.push(outcome(create(e.distinctId, [e.distinctId], initialPersonProperties(e.updates), identify, e.timestamp), warnings));
      continue;
    }
    const updated = applyPersonUpdates(person.properties, e.updates);
    if (updated.changed || (identify && !person.isIdentified)) {
      // Set one by one: Object.assign with a fresh object cost every event an allocation and a generic copy.
      person.properties = updated.properties;
      person.isIdentified ||= identify;
      person.version += 1;
      person.changed = true;
    }
    result.outcomes.push(outcome(person, warnings));
  }

  const finalOf = (id: number): number => {
    let at = id;
    while (persons.get(at)!.mergedInto !== null) at = persons.get(at)!.mergedInto!;
    return at;
  };
  result.persons = [...persons.values()].filter((p) => p.changed);
  result.newDistinctIds = [...newIds].map((distinctId) => ({ distinctId, personId: finalOf(owner.get(distinctId)!), version: state.distinctIdStartVersion(distinctId) }));
  result.moves = result.persons.filter((p) => p.deleted && !p.created).map((p) => ({ from: p.id, into: finalOf(p.id) }));
  result.merges = result.merges.map((m) => ({ ...m, survivorId: finalOf(m.survivorId) }));
  return result;
}
