import { applyPersonUpdates, initialPersonProperties, personlessPersonId, type PersonUpdates } from '@tributary/ingestion';
import type { PoolClient } from '@tributary/postgres';
import { ConcurrentClaimError } from './apply-person-changes.js';
import { PersonStore, type PersonRecord } from './person-store.js';

export interface BulkPersonInput {
  teamId: number;
  distinctId: string;
  updates: PersonUpdates;
  timestamp: Date;
}

export interface BulkPersonChanges {
  /** Each input's person as it is after that input, in input order. */
  after: PersonRecord[];
  /** Final state of every person created or changed. */
  upserted: PersonRecord[];
  /** Distinct ids given to persons created here. */
  distinctIds: { teamId: number; distinctId: string; personUuid: string; version: number }[];
}

/**
 * Applies many events' `$set` / `$set_once` / `$unset` in one transaction: the persons of all
 * their distinct ids are locked once, the updates are applied in memory in event order, and each
 * changed person is written once with its final properties and version. None of these events
 * changes which person a distinct id belongs to (see `planBatch`), so this is the same result the
 * events would have one by one, for a fraction of the round trips.
 */
export async function applyBulkPersonChanges(client: PoolClient, inputs: readonly BulkPersonInput[]): Promise<BulkPersonChanges> {
  const store = new PersonStore(client);
  const key = (teamId: number, distinctId: string) => `${teamId}\u0000${distinctId}`;
  const personOf = new Map<string, number>();
  const persons = new Map<number, PersonRecord>();
  const teams = new Map<number, Set<string>>();
  for (const input of inputs) teams.set(input.teamId, (teams.get(input.teamId) ?? new Set()).add(input.distinctId));
  for (const [teamId, ids] of [...teams].sort(([a], [b]) => a - b)) {
    for (const [distinctId, person] of await store.lockByDistinctIds(teamId, [...ids])) {
      personOf.set(key(teamId, distinctId), person.id);
      persons.set(person.id, person);
    }
  }

  // A distinct id without a person gets one from its first event, all of them in one go.
  const firstOf = new Map<string, BulkPersonInput>();
  for (const input of inputs) {
    const k = key(input.teamId, input.distinctId);
    if (!personOf.has(k) && !firstOf.has(k)) firstOf.set(k, input);
  }
  const created = new Set<number>();
  const result: BulkPersonChanges = { after: [], upserted: [], distinctIds: [] };
  for (const teamId of teams.keys()) {
    const firsts = [...firstOf.values()].filter((input) => input.teamId === teamId);
    const made = await store.createMany(
      teamId,
      firsts.map((input) => ({ uuid: personlessPersonId(teamId, input.distinctId), distinctId: input.distinctId, properties: initialPersonProperties(input.updates), createdAt: input.timestamp })),
    );
    if (!made) throw new ConcurrentClaimError(`one of ${firsts.length} distinct ids was claimed concurrently`);
    for (const [distinctId, person] of made.persons) {
      personOf.set(key(teamId, distinctId), person.id);
      persons.set(person.id, person);
      created.add(person.id);
      result.distinctIds.push({ teamId, distinctId, personUuid: person.uuid, version: made.distinctIdVersions.get(distinctId) ?? 0 });
    }
  }

  const changed = new Set<number>();
  for (const input of inputs) {
    const person = persons.get(personOf.get(key(input.teamId, input.distinctId))!)!;
    if (firstOf.get(key(input.teamId, input.distinctId)) === input) {
      result.after.push(person);
      continue;
    }
    const updated = applyPersonUpdates(person.properties, input.updates);
    if (!updated.changed) {
      result.after.push(person);
      continue;
    }
    const next = { ...person, properties: updated.properties, version: person.version + 1 };
    persons.set(person.id, next);
    changed.add(person.id);
    result.after.push(next);
  }

  const writes = [...changed].map((id) => persons.get(id)!);
  await store.updateMany(writes);
  result.upserted = [...new Set([...created, ...changed])].map((id) => persons.get(id)!);
  return result;
}
