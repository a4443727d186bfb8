import {
  applyPersonUpdates,
  initialPersonProperties,
  mergeIdsOf,
  personlessPersonId,
  planMerge,
  type PersonSnapshot,
  type PersonUpdates,
} from '@tributary/ingestion';
import type { PoolClient } from '@tributary/postgres';
import { PersonStore, type PersonRecord } from './person-store.js';

export interface PersonChangeInput {
  teamId: number;
  event: string;
  distinctId: string;
  properties: Record<string, unknown>;
  updates: PersonUpdates;
  timestamp: Date;
}

/** What the transaction changed, for the ClickHouse copies and the decide cache. */
export interface PersonChanges {
  /** The event's person after the event. */
  person: PersonRecord;
  /** Persons whose row changed (the event's person included when it changed). */
  upserted: PersonRecord[];
  deleted: PersonRecord[];
  distinctIds: { distinctId: string; personUuid: string; version: number }[];
  warnings: { type: string; details: Record<string, unknown> }[];
}

/** Thrown when a concurrent transaction claimed a distinct id first; the caller retries. */
export class ConcurrentClaimError extends Error {}

const snapshot = (p: PersonRecord | undefined): PersonSnapshot | null =>
  p ? { id: p.id, properties: p.properties, isIdentified: p.is_identified, createdAt: p.created_at, version: p.version } : null;

/**
 * Applies one event's identity and property changes inside the caller's transaction: merges for
 * `$identify` / `$create_alias`, then the event's `$set`, `$set_once` and `$unset` on the
 * person its distinct id belongs to, creating that person when there is none.
 */
export async function applyPersonChanges(client: PoolClient, input: PersonChangeInput): Promise<PersonChanges> {
  const store = new PersonStore(client);
  const { teamId, distinctId } = input;
  const changes: PersonChanges = { person: undefined as unknown as PersonRecord, upserted: [], deleted: [], distinctIds: [], warnings: [] };
  const link = mergeIdsOf(input.event, distinctId, input.properties);
  const locked = await store.lockByDistinctIds(teamId, link ? [distinctId, link.intoId, link.otherId] : [distinctId]);
  let person = locked.get(distinctId);
  const identify = input.event === '$identify' || input.event === '$create_alias';

  if (link) {
    const plan = planMerge({ intoId: link.intoId, otherId: link.otherId, into: snapshot(locked.get(link.intoId)), other: snapshot(locked.get(link.otherId)) });
    switch (plan.kind) {
      case 'refused':
        changes.warnings.push({ type: plan.warning, details: plan.details });
        break;
      case 'create': {
        const created = await store.create({
          teamId,
          uuid: personlessPersonId(teamId, distinctId),
          properties: initialPersonProperties(input.updates),
          isIdentified: true,
          createdAt: input.timestamp,
          distinctIds: plan.distinctIds,
        });
        if (!created) throw new ConcurrentClaimError(`distinct ids ${plan.distinctIds.join(', ')} were claimed concurrently`);
        changes.upserted.push(created.person);
        for (const id of plan.distinctIds) changes.distinctIds.push({ distinctId: id, personUuid: created.person.uuid, version: created.distinctIdVersions.get(id) ?? 0 });
        changes.person = created.person;
        return changes;
      }
      case 'attach': {
        const target = [...locked.values()].find((p) => p.id === plan.person.id)!;
        const version = await store.addDistinctId(teamId, target.id, plan.distinctId);
        if (version === null) throw new ConcurrentClaimError(`distinct id ${plan.distinctId} was claimed concurrently`);
        changes.distinctIds.push({ distinctId: plan.distinctId, personUuid: target.uuid, version });
        person = target;
        break;
      }
      case 'merge': {
        const survivor = [...locked.values()].find((p) => p.id === plan.survivor.id)!;
        const loser = [...locked.values()].find((p) => p.id === plan.loser.id)!;
        const moved = await store.moveDistinctIds(loser.id, survivor.id);
        await store.delete(loser.id);
        await store.recordMerge(teamId, survivor.id, loser, moved.map((m) => m.distinct_id));
        changes.deleted.push({ ...loser, version: loser.version + 1 });
        for (const m of moved) changes.distinctIds.push({ distinctId: m.distinct_id, personUuid: survivor.uuid, version: m.version });
        person = await store.update(survivor, { properties: plan.properties, isIdentified: survivor.is_identified, version: plan.version, createdAt: plan.createdAt });
        changes.upserted.push(person);
        break;
      }
      case 'none':
        break;
    }
  }

  if (!person) {
    const created = await store.create({
      teamId,
      uuid: personlessPersonId(teamId, distinctId),
      properties: initialPersonProperties(input.updates),
      isIdentified: identify,
      createdAt: input.timestamp,
      distinctIds: [distinctId],
    });
    if (!created) throw new ConcurrentClaimError(`distinct id ${distinctId} was claimed concurrently`);
    changes.upserted.push(created.person);
    changes.distinctIds.push({ distinctId, personUuid: created.person.uuid, version: created.distinctIdVersions.get(distinctId) ?? 0 });
    changes.person = created.person;
    return changes;
  }

  const updated = applyPersonUpdates(person.properties, input.updates);
  const becomesIdentified = identify && !person.is_identified;
  if (updated.changed || becomesIdentified) {
    person = await store.update(person, { properties: updated.properties, isIdentified: person.is_identified || identify, version: person.version + 1 });
    changes.upserted = [...changes.upserted.filter((p) => p.id !== person!.id), person];
  }
  changes.person = person;
  return changes;
}
