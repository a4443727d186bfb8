import type { ChunkPerson } from '@tributary/ingestion';
import { PERSON_RECORD_TEXT_COLUMNS, parsePropertiesJson, propertiesJson, propertiesPatch, type PersonRecord } from '@tributary/persons';
import type { PoolClient } from '@tributary/postgres';
import { groupBy } from '../group-by.js';

export type { PersonRecord };

/** Thrown when a concurrent transaction claimed a distinct id first; the caller retries. */
export class ConcurrentClaimError extends Error {}

/**
 * Postgres access for persons and their distinct ids, inside the caller's transaction, a
 * bounded number of statements per chunk whatever its size. Reads for update lock the person
 * rows, so merges touching the same persons from different partitions or replicas run one
 * after the other; a distinct id claimed by another transaction in the meantime shows up as a
 * conflict on insert, and the chunk is retried.
 */
export class IngestPersonStore {
  constructor(private readonly client: PoolClient) {}

  /** The persons of these distinct ids, locked in id order (one statement, so no lock cycles). */
  async lockByDistinctIds(teamId: number, distinctIds: readonly string[]): Promise<Map<string, PersonRecord>> {
    const { rows } = await this.client.query<Omit<PersonRecord, 'properties'> & { distinct_id: string; properties: string }>(
      `SELECT d.distinct_id, ${PERSON_RECORD_TEXT_COLUMNS}
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
        WHERE d.team_id = $1 AND d.distinct_id = ANY($2::text[])
        ORDER BY p.id
        FOR UPDATE OF p`,
      [teamId, [...new Set(distinctIds)]],
    );
    // A person named by several of the distinct ids comes once per id: its properties are parsed once.
    const byId = new Map<number, PersonRecord>();
    return new Map(
      rows.map(({ distinct_id, properties, ...person }) => {
        let record = byId.get(person.id);
        if (!record) byId.set(person.id, (record = { ...person, properties: parsePropertiesJson(properties) }));
        return [distinct_id, record];
      }),
    );
  }

  /**
   * Versions that new rows must start at: above the tombstones of deleted persons, and at least 1
   * for a distinct id that sent personless events (its old events carry another person, so it
   * needs the override a version above 0 gives person-on-events queries).
   */
  async startVersions(teamId: number, distinctIds: readonly string[], uuids: readonly string[]): Promise<{ distinctIds: Map<string, number>; uuids: Map<string, number> }> {
    const [ids, persons] = await Promise.all([
      distinctIds.length === 0
        ? { rows: [] }
        : this.client.query<{ key: string; version: number }>(
            `SELECT c.id AS key, GREATEST(t.version + 1, CASE WHEN p.distinct_id IS NULL THEN 0 ELSE 1 END) AS version
               FROM unnest($2::text[]) AS c (id)
               LEFT JOIN distinct_id_tombstones AS t ON t.team_id = $1 AND t.distinct_id = c.id
               LEFT JOIN personless_distinct_ids AS p ON p.team_id = $1 AND p.distinct_id = c.id
              WHERE t.distinct_id IS NOT NULL OR p.distinct_id IS NOT NULL`,
            [teamId, distinctIds],
          ),
      uuids.length === 0
        ? { rows: [] }
        : this.client.query<{ key: string; version: number }>('SELECT uuid::text AS key, version + 1 AS version FROM person_tombstones WHERE uuid = ANY($1::uuid[])', [uuids]),
    ]);
    const toMap = (rows: { key: string; version: number }[]) => new Map(rows.map((r) => [r.key, Number(r.version)]));
    return { distinctIds: toMap(ids.rows), uuids: toMap(persons.rows) };
  }

  /** Remembers distinct ids that sent personless events while they had no person (see `startVersions`). */
  async recordPersonless(teamId: number, distinctIds: readonly string[]): Promise<void> {
    if (distinctIds.length === 0) return;
    await this.client.query(
      'INSERT INTO personless_distinct_ids (team_id, distinct_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING',
      [teamId, distinctIds],
    );
  }

  /**
   * Stores new persons in one statement; returns each one's id by uuid. A person's uuid derives
   * from its first distinct id, so two partitions that both meet a new id create the same uuid:
   * the one that commits second is told to retry, and then finds the person.
   */
  async insertPersons(teamId: number, persons: readonly ChunkPerson[]): Promise<Map<string, number>> {
    if (persons.length === 0) return new Map();
    const { rows } = await this.client.query<{ id: number; uuid: string }>(
      `INSERT INTO persons (uuid, team_id, properties, is_identified, created_at, version)
       SELECT e.uuid, $1, e.properties, e.is_identified, e.created_at, e.version FROM json_to_recordset($2::json) AS e (${RECORD})
       ON CONFLICT (uuid) DO NOTHING
       RETURNING id, uuid`,
      [teamId, recordsOf(persons)],
    );
    if (rows.length !== persons.length) throw new ConcurrentClaimError(`${persons.length - rows.length} of ${persons.length} new persons were created concurrently`);
    return new Map(rows.map((r) => [r.uuid, r.id]));
  }

  /**
   * Writes stored persons' final state in one statement, their properties as a patch of what
   * `lockByDistinctIds` read (`stored`, by person id): the rows stayed locked since, so the
   * patch applies to those very properties.
   */
  async updatePersons(persons: readonly ChunkPerson[], stored: ReadonlyMap<number, Record<string, unknown>>): Promise<void> {
    if (persons.length === 0) return;
    await this.client.query(
      `UPDATE persons AS p SET properties = (p.properties || v.set) - v.unset, is_identified = v.is_identified, created_at = v.created_at, version = v.version
         FROM json_to_recordset($1::json) AS v (id bigint, set jsonb, unset text[], is_identified boolean, created_at timestamptz, version bigint) WHERE p.id = v.id`,
      [patchesOf(persons, stored)],
    );
  }

  /** Moves every distinct id of each merged-away person to its survivor, one version up. */
  async moveDistinctIds(moves: readonly { from: number; into: number }[]): Promise<{ distinct_id: string; from_id: number; person_id: number; version: number }[]> {
    if (moves.length === 0) return [];
    const { rows } = await this.client.query<{ distinct_id: string; from_id: number; person_id: number; version: number }>(
      `UPDATE person_distinct_ids AS d SET person_id = m.into_id, version = d.version + 1
         FROM unnest($1::bigint[], $2::bigint[]) AS m (from_id, into_id)
        WHERE d.person_id = m.from_id
        RETURNING d.distinct_id, m.from_id, d.person_id, d.version`,
      [moves.map((m) => m.from), moves.map((m) => m.into)],
    );
    return rows.map((r) => ({ ...r, version: Number(r.version) }));
  }

  /** Claims new distinct ids in the order given; throws when another transaction claimed one first. */
  async insertDistinctIds(teamId: number, ids: readonly { distinctId: string; personId: number; version: number }[]): Promise<void> {
    if (ids.length === 0) return;
    const inserted = await this.client.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version)
       SELECT $1, c.id, c.person_id, c.version FROM unnest($2::text[], $3::bigint[], $4::bigint[]) WITH ORDINALITY AS c (id, person_id, version, n) ORDER BY c.n
       ON CONFLICT DO NOTHING`,
      [teamId, ids.map((i) => i.distinctId), ids.map((i) => i.personId), ids.map((i) => i.version)],
    );
    if (inserted.rowCount !== ids.length) throw new ConcurrentClaimError(`${ids.length - (inserted.rowCount ?? 0)} of ${ids.length} distinct ids were claimed concurrently`);
  }

  async deletePersons(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) await this.client.query('DELETE FROM persons WHERE id = ANY($1::bigint[])', [ids]);
  }

  /** The management API's person activity log shows merges next to its own changes; ingest has no user. */
  async recordMerges(teamId: number, merges: readonly { survivorId: number; loserUuid: string; distinctIds: readonly string[] }[]): Promise<void> {
    if (merges.length === 0) return;
    await this.client.query(
      `INSERT INTO activity_log (team_id, scope, item_id, activity, user_id, detail)
       SELECT $1, 'Person', m.item_id, 'merged', NULL, m.detail::jsonb FROM unnest($2::text[], $3::text[]) AS m (item_id, detail)`,
      [teamId, merges.map((m) => String(m.survivorId)), merges.map((m) => JSON.stringify({ merged_person_uuid: m.loserUuid, distinct_ids: m.distinctIds }))],
    );
  }

  /** Every distinct id of these persons, for the decide cache. */
  async distinctIdsOf(personIds: readonly number[]): Promise<Map<number, string[]>> {
    if (personIds.length === 0) return new Map();
    const { rows } = await this.client.query<{ person_id: number; distinct_id: string }>(
      'SELECT person_id, distinct_id FROM person_distinct_ids WHERE person_id = ANY($1::bigint[])',
      [personIds],
    );
    return groupBy(rows, (r) => r.person_id, (r) => r.distinct_id);
  }
}

// Persons travel as one JSON document: a text array parameter would escape each person's
// properties character by character, which costs more than the statement itself.
const RECORD = 'id bigint, uuid uuid, properties jsonb, is_identified boolean, created_at timestamptz, version bigint';

function patchesOf(persons: readonly ChunkPerson[], stored: ReadonlyMap<number, Record<string, unknown>>): string {
  let text = '[';
  for (const p of persons) {
    const before = stored.get(p.id);
    if (!before) throw new Error(`person ${p.id} is updated but was not read locked`);
    const { set, unset } = propertiesPatch(before, p.properties);
    text += `${text.length > 1 ? ',' : ''}{"id":${p.id},"set":${set},"unset":${JSON.stringify(unset)},"is_identified":${p.isIdentified},"created_at":"${p.createdAt.toISOString()}","version":${p.version}}`;
  }
  return `${text}]`;
}

function recordsOf(persons: readonly ChunkPerson[]): string {
  // Built as text so each state's properties reuse the JSON the other copies of it were written with.
  let text = '[';
  for (const p of persons) {
    text += `${text.length > 1 ? ',' : ''}{"id":${p.id},"uuid":"${p.uuid}","properties":${propertiesJson(p.properties)},"is_identified":${p.isIdentified},"created_at":"${p.createdAt.toISOString()}","version":${p.version}}`;
  }
  return `${text}]`;
}
