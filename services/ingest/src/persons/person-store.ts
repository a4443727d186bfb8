import type { PersonRecord } from '@tributary/persons';
import type { PoolClient } from '@tributary/postgres';

export type { PersonRecord };

const PERSON_COLUMNS = 'p.id, p.uuid, p.team_id, p.properties, p.is_identified, p.created_at, p.version';
/** A distinct id claimed again after its person was deleted starts above its tombstone (`id` and `$1` in scope). */
const TOMBSTONE_VERSION = 'COALESCE((SELECT t.version + 1 FROM distinct_id_tombstones t WHERE t.team_id = $1 AND t.distinct_id = id), 0)';

/**
 * Postgres access for persons and their distinct ids, always inside the caller's transaction.
 * Reads for update lock the person rows, so merges touching the same persons from different
 * partitions or replicas run one after the other.
 */
export class PersonStore {
  constructor(private readonly client: PoolClient) {}

  /** The persons of these distinct ids, locked; ids are locked in sorted order to avoid deadlocks. */
  async lockByDistinctIds(teamId: number, distinctIds: readonly string[]): Promise<Map<string, PersonRecord>> {
    const sorted = [...new Set(distinctIds)].sort();
    const { rows } = await this.client.query<PersonRecord & { distinct_id: string }>(
      `SELECT d.distinct_id, ${PERSON_COLUMNS}
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
        WHERE d.team_id = $1 AND d.distinct_id = ANY($2::text[])
        ORDER BY p.id
        FOR UPDATE OF p`,
      [teamId, sorted],
    );
    return new Map(rows.map(({ distinct_id, ...person }) => [distinct_id, person]));
  }

  async create(input: {
    teamId: number;
    uuid: string;
    properties: Record<string, unknown>;
    isIdentified: boolean;
    createdAt: Date;
    distinctIds: readonly string[];
  }): Promise<{ person: PersonRecord; distinctIdVersions: Map<string, number> } | null> {
    const { rows } = await this.client.query<PersonRecord>(
      `INSERT INTO persons AS p (uuid, team_id, properties, is_identified, created_at, version)
       VALUES ($1, $2, $3, $4, $5, COALESCE((SELECT version + 1 FROM person_tombstones WHERE uuid = $1), 0)) RETURNING ${PERSON_COLUMNS}`,
      [input.uuid, input.teamId, input.properties, input.isIdentified, input.createdAt],
    );
    const person = rows[0]!;
    const inserted = await this.client.query<{ distinct_id: string; version: string }>(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version)
       SELECT $1, id, $3, ${TOMBSTONE_VERSION} FROM unnest($2::text[]) AS id ON CONFLICT DO NOTHING RETURNING distinct_id, version`,
      [input.teamId, input.distinctIds, person.id],
    );
    // Another transaction claimed one of the ids first: the caller retries and finds that person.
    if (inserted.rowCount !== input.distinctIds.length) return null;
    return { person, distinctIdVersions: new Map(inserted.rows.map((r) => [r.distinct_id, Number(r.version)])) };
  }

  /**
   * Creates one person per distinct id in two statements. Null when another transaction claimed
   * one of the ids first; the caller rolls back and retries.
   */
  async createMany(
    teamId: number,
    entries: readonly { uuid: string; distinctId: string; properties: Record<string, unknown>; createdAt: Date }[],
  ): Promise<{ persons: Map<string, PersonRecord>; distinctIdVersions: Map<string, number> } | null> {
    if (entries.length === 0) return { persons: new Map(), distinctIdVersions: new Map() };
    const { rows } = await this.client.query<PersonRecord>(
      `INSERT INTO persons AS p (uuid, team_id, properties, is_identified, created_at, version)
       SELECT e.uuid, $1, e.properties::jsonb, false, e.created_at, COALESCE((SELECT t.version + 1 FROM person_tombstones t WHERE t.uuid = e.uuid), 0)
         FROM unnest($2::uuid[], $3::text[], $4::timestamptz[]) AS e (uuid, properties, created_at)
       RETURNING ${PERSON_COLUMNS}`,
      [teamId, entries.map((e) => e.uuid), entries.map((e) => JSON.stringify(e.properties)), entries.map((e) => e.createdAt)],
    );
    const byUuid = new Map(rows.map((person) => [person.uuid, person]));
    const inserted = await this.client.query<{ distinct_id: string; version: number }>(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version)
       SELECT $1, c.id, c.person_id, ${TOMBSTONE_VERSION} FROM unnest($2::text[], $3::bigint[]) AS c (id, person_id)
       ON CONFLICT DO NOTHING RETURNING distinct_id, version`,
      [teamId, entries.map((e) => e.distinctId), entries.map((e) => byUuid.get(e.uuid)!.id)],
    );
    if (inserted.rowCount !== entries.length) return null;
    return {
      persons: new Map(entries.map((e) => [e.distinctId, byUuid.get(e.uuid)!])),
      distinctIdVersions: new Map(inserted.rows.map((r) => [r.distinct_id, Number(r.version)])),
    };
  }

  async update(person: PersonRecord, changes: { properties: Record<string, unknown>; isIdentified: boolean; version: number; createdAt?: Date }): Promise<PersonRecord> {
    const { rows } = await this.client.query<PersonRecord>(
      `UPDATE persons AS p SET properties = $2, is_identified = $3, version = $4, created_at = COALESCE($5, p.created_at)
        WHERE p.id = $1 RETURNING ${PERSON_COLUMNS}`,
      [person.id, changes.properties, changes.isIdentified, changes.version, changes.createdAt ?? null],
    );
    return rows[0]!;
  }

  /** Writes several persons' properties and versions in one statement. */
  async updateMany(persons: readonly PersonRecord[]): Promise<void> {
    if (persons.length === 0) return;
    await this.client.query(
      `UPDATE persons AS p SET properties = v.properties::jsonb, version = v.version
         FROM (SELECT unnest($1::bigint[]) AS id, unnest($2::text[]) AS properties, unnest($3::bigint[]) AS version) AS v
        WHERE p.id = v.id`,
      [persons.map((p) => p.id), persons.map((p) => JSON.stringify(p.properties)), persons.map((p) => p.version)],
    );
  }

  /** Attaches one more distinct id to a person; false when another person already has it. */
  async addDistinctId(teamId: number, personId: number, distinctId: string): Promise<number | null> {
    const { rows } = await this.client.query<{ version: number }>(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version)
       SELECT $1, id, $3, ${TOMBSTONE_VERSION} FROM (SELECT $2::text AS id) AS claimed
       ON CONFLICT DO NOTHING RETURNING version`,
      [teamId, distinctId, personId],
    );
    return rows[0] ? Number(rows[0].version) : null;
  }

  /** Moves every distinct id of one person to another, bumping each id's version. */
  async moveDistinctIds(fromPersonId: number, toPersonId: number): Promise<{ distinct_id: string; version: number }[]> {
    const { rows } = await this.client.query<{ distinct_id: string; version: number }>(
      `UPDATE person_distinct_ids SET person_id = $2, version = version + 1 WHERE person_id = $1 RETURNING distinct_id, version`,
      [fromPersonId, toPersonId],
    );
    return rows;
  }

  async delete(personId: number): Promise<void> {
    await this.client.query('DELETE FROM persons WHERE id = $1', [personId]);
  }

  /** The management API's person activity log shows merges next to its own changes; ingest has no user. */
  async recordMerge(teamId: number, survivorId: number, loser: { uuid: string }, movedDistinctIds: readonly string[]): Promise<void> {
    await this.client.query(`INSERT INTO activity_log (team_id, scope, item_id, activity, user_id, detail) VALUES ($1, 'Person', $2, 'merged', NULL, $3)`, [
      teamId,
      String(survivorId),
      { merged_person_uuid: loser.uuid, distinct_ids: movedDistinctIds },
    ]);
  }

  async distinctIdsOf(personId: number): Promise<string[]> {
    const { rows } = await this.client.query<{ distinct_id: string }>('SELECT distinct_id FROM person_distinct_ids WHERE person_id = $1 ORDER BY distinct_id', [personId]);
    return rows.map((r) => r.distinct_id);
  }
}
