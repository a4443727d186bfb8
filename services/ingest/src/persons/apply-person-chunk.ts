import { distinctIdRow, personRow, type DistinctIdRowOut, type PersonRowOut } from '@tributary/clickhouse';
import { applyChunk, personlessPersonId, type ChunkEvent, type EventOutcome, type PersonAfterEvent } from '@tributary/ingestion';
import type { CachedPerson } from '@tributary/control-plane';
import type { PoolClient } from '@tributary/postgres';
import { IngestPersonStore } from './ingest-person-store.js';

export interface PersonChunkChanges<P> {
  /** What `keep` made of each event's person, and its warnings, in event order. */
  outcomes: EventOutcome<P>[];
  personRows: PersonRowOut[];
  distinctIdRows: DistinctIdRowOut[];
  /** Decide's cache entries for every person that changed and still exists. */
  cache: { teamId: number; distinctIds: string[]; person: CachedPerson }[];
}

/**
 * One project's chunk of events applied to Postgres in one go, inside the caller's transaction:
 * lock the persons the chunk names, apply the events in memory in order (`applyChunk`), then
 * write the outcome in a fixed number of statements, whatever the chunk's size.
 */
export async function applyPersonChunk<P>(client: PoolClient, teamId: number, events: readonly ChunkEvent[], keep: (person: PersonAfterEvent) => P): Promise<PersonChunkChanges<P>> {
  const store = new IngestPersonStore(client);
  const named = new Set<string>();
  for (const e of events) {
    named.add(e.distinctId);
    if (!e.personless && e.link) named.add(e.link.intoId).add(e.link.otherId);
  }
  const locked = await store.lockByDistinctIds(teamId, [...named]);
  const unknown = [...named].filter((id) => !locked.has(id));
  // Recorded before the versions are read, so an id personless earlier in this chunk starts one up too.
  await store.recordPersonless(teamId, [...new Set(events.filter((e) => e.personless && !locked.has(e.distinctId)).map((e) => e.distinctId))]);
  const start = await store.startVersions(teamId, unknown, unknown.map((id) => personlessPersonId(teamId, id)));
  const result = applyChunk(
    {
      teamId,
      persons: new Map([...locked].map(([id, p]) => [id, { id: p.id, uuid: p.uuid, properties: p.properties, isIdentified: p.is_identified, createdAt: p.created_at, version: p.version }])),
      distinctIdStartVersion: (id) => start.distinctIds.get(id) ?? 0,
      personStartVersion: (uuid) => start.uuids.get(uuid) ?? 0,
    },
    events,
    keep,
  );

  const byId = new Map(result.persons.map((p) => [p.id, p]));
  const created = result.persons.filter((p) => p.created && !p.deleted);
  const storedIds = await store.insertPersons(teamId, created);
  const storedId = (id: number) => (id < 0 ? storedIds.get(byId.get(id)!.uuid)! : id);
  const uuidOfStored = new Map<number, string>([...[...locked.values()].map((p): [number, string] => [p.id, p.uuid]), ...[...storedIds].map(([uuid, id]): [number, string] => [id, uuid])]);

  await store.updatePersons(
    result.persons.filter((p) => !p.created && !p.deleted),
    new Map([...locked.values()].map((p) => [p.id, p.properties])),
  );
  const moved = await store.moveDistinctIds(result.moves.map((m) => ({ from: m.from, into: storedId(m.into) })));
  await store.insertDistinctIds(
    teamId,
    result.newDistinctIds.map((d) => ({ distinctId: d.distinctId, personId: storedId(d.personId), version: d.version })),
  );
  await store.deletePersons(result.persons.filter((p) => p.deleted && !p.created).map((p) => p.id));
  await store.recordMerges(
    teamId,
    result.merges.map((m) => ({
      survivorId: storedId(m.survivorId),
      loserUuid: m.loserUuid,
      distinctIds: [...new Set([...m.distinctIds, ...moved.filter((r) => r.from_id === m.loserId).map((r) => r.distinct_id)])],
    })),
  );

  const alive = result.persons.filter((p) => !p.deleted);
  const idsOf = await store.distinctIdsOf(alive.map((p) => storedId(p.id)));
  return {
    outcomes: result.outcomes,
    personRows: result.persons.map((p) => personRow({ uuid: p.uuid, team_id: teamId, properties: p.properties, is_identified: p.isIdentified, created_at: p.createdAt, version: p.version }, { deleted: p.deleted })),
    distinctIdRows: [
      ...result.newDistinctIds.map((d) => distinctIdRow(teamId, { distinctId: d.distinctId, personUuid: uuidOfStored.get(storedId(d.personId))!, version: d.version }, { deleted: false })),
      ...moved.map((r) => distinctIdRow(teamId, { distinctId: r.distinct_id, personUuid: uuidOfStored.get(r.person_id)!, version: r.version }, { deleted: false })),
    ],
    cache: alive.map((p) => ({ teamId, distinctIds: idsOf.get(storedId(p.id)) ?? [], person: { personId: storedId(p.id), personUuid: p.uuid, properties: p.properties } })),
  };
}
