import type { CohortFilterGroup } from '@tributary/flags';
import { PERSON_RECORD_COLUMNS, type PersonRecord as StoredPerson } from '@tributary/persons';
import type { Pool, PoolClient } from '@tributary/postgres';
import { rowId } from '@tributary/postgres/row-id';
import type { PropertyFilter } from '@tributary/property-filters';
import { postgresPropertyConditions } from '@tributary/property-filters/postgres';
import { dynamicCohortCondition } from '../cohorts/dynamic-cohort-condition.js';

export interface PersonRecord extends StoredPerson {
  /** In the order the person got them: the first is its display name fallback and what a split keeps. */
  distinct_ids: string[];
}

export interface PersonListQuery {
  limit: number;
  offset: number;
  search?: string;
  distinctId?: string;
  email?: string;
  /** Members of this static cohort only (listed in it); the caller checked the cohort is the project's. */
  cohortId?: number;
  /** Persons a dynamic cohort's filters take now. */
  cohortFilters?: CohortFilterGroup;
  properties: PropertyFilter[];
}

/** A distinct id as it was when its person was deleted or split, for the ClickHouse copies. */
export interface DistinctIdChange {
  distinctId: string;
  personUuid: string;
  version: number;
}

const SELECT = `SELECT ${PERSON_RECORD_COLUMNS},
  COALESCE((SELECT array_agg(d.distinct_id ORDER BY d.seq) FROM person_distinct_ids d WHERE d.person_id = p.id), '{}') AS distinct_ids
  FROM persons p`;

/** PostHog writes deletions this far above the live version, so a late update of the same person cannot resurrect it. */
const TOMBSTONE_STEP = 100;

/**
 * Persons as the management API reads and changes them, in Postgres, the source of truth ingest
 * writes. Deletes and splits lock the person rows, as ingest's merges do, so the two serialize.
 */
export class ManagementPersonStore {
  constructor(private readonly pool: Pool) {}

  async list(teamId: number, query: PersonListQuery, now: Date): Promise<{ count: number; results: PersonRecord[] }> {
    const params: unknown[] = [teamId];
    const where = ['p.team_id = $1'];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (query.distinctId !== undefined) {
      where.push(`EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.person_id = p.id AND d.team_id = $1 AND d.distinct_id = ${param(query.distinctId)})`);
    }
    if (query.cohortId !== undefined) where.push(`EXISTS (SELECT 1 FROM cohort_people c WHERE c.person_id = p.id AND c.cohort_id = ${param(query.cohortId)})`);
    if (query.cohortFilters !== undefined) {
      const condition = dynamicCohortCondition('p.properties', query.cohortFilters, params.length + 1, now);
      params.push(...condition.params);
      where.push(condition.text);
    }
    if (query.email !== undefined) where.push(`lower(p.properties ->> 'email') = lower(${param(query.email)})`);
    if (query.search !== undefined && query.search.trim() !== '') {
      const exact = param(query.search.trim());
      const like = param(`%${query.search.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      where.push(`(p.properties ->> 'email' ILIKE ${like} OR p.properties ->> 'name' ILIKE ${like} OR p.uuid::text = lower(${exact})
        OR EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.person_id = p.id AND d.team_id = $1 AND d.distinct_id = ${exact}))`);
    }
    const filters = postgresPropertyConditions('p.properties', query.properties, params.length + 1, now);
    params.push(...filters.params);
    where.push(filters.text);
    const clause = where.join(' AND ');
    const page = params.length;
    const [rows, count] = await Promise.all([
      this.pool.query<PersonRecord>(`${SELECT} WHERE ${clause} ORDER BY p.id DESC LIMIT $${page + 1} OFFSET $${page + 2}`, [...params, query.limit, query.offset]),
      this.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM persons p WHERE ${clause}`, params),
    ]);
    return { count: count.rows[0]!.count, results: rows.rows };
  }

  async get(teamId: number, id: number): Promise<PersonRecord | null> {
    const { rows } = await this.pool.query<PersonRecord>(`${SELECT} WHERE p.team_id = $1 AND p.id = $2`, [teamId, id]);
    return rows[0] ?? null;
  }

  /** The project's persons of these uuids, in the order given; uuids of no person of the project are left out. */
  async byUuids(teamId: number, uuids: readonly string[]): Promise<PersonRecord[]> {
    if (uuids.length === 0) return [];
    const { rows } = await this.pool.query<PersonRecord>(`${SELECT} WHERE p.team_id = $1 AND p.uuid = ANY($2::uuid[])`, [teamId, uuids]);
    const byUuid = new Map(rows.map((row) => [row.uuid, row]));
    return uuids.map((uuid) => byUuid.get(uuid)).filter((row): row is PersonRecord => row !== undefined);
  }

  /** The person each of these distinct ids belongs to now; ids without a person are left out. */
  async ofDistinctIds(teamId: number, distinctIds: readonly string[]): Promise<Map<string, StoredPerson>> {
    if (distinctIds.length === 0) return new Map();
    const { rows } = await this.pool.query<StoredPerson & { distinct_id: string }>(
      `SELECT d.distinct_id, ${PERSON_RECORD_COLUMNS} FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
        WHERE d.team_id = $1 AND d.distinct_id = ANY($2::text[])`,
      [teamId, [...new Set(distinctIds)]],
    );
    return new Map(rows.map(({ distinct_id, ...person }) => [distinct_id, person]));
  }

  /** Person ids for a mix of integer ids, person uuids and distinct ids; unknown ones are left out. */
  async resolveIds(teamId: number, ids: readonly string[], distinctIds: readonly string[]): Promise<number[]> {
    const numeric = ids.map((id) => rowId(id, 'bigint')).filter((id) => id !== null);
    const uuids = ids.filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
    const { rows } = await this.pool.query<{ id: number }>(
      `SELECT p.id FROM persons p WHERE p.team_id = $1 AND (p.id = ANY($2::bigint[]) OR p.uuid = ANY($3::uuid[])
         OR p.id IN (SELECT d.person_id FROM person_distinct_ids d WHERE d.team_id = $1 AND d.distinct_id = ANY($4::text[])))`,
      [teamId, numeric, uuids, distinctIds],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Deletes persons and their distinct ids, leaving tombstones whose versions the ClickHouse
   * copies are written at; a person created again later starts above them.
   */
  async delete(client: PoolClient, teamId: number, ids: readonly number[]): Promise<{ persons: PersonRecord[]; distinctIds: DistinctIdChange[] }> {
    const { rows: persons } = await client.query<PersonRecord>(`${SELECT} WHERE p.team_id = $1 AND p.id = ANY($2::bigint[]) ORDER BY p.id FOR UPDATE OF p`, [teamId, ids]);
    if (persons.length === 0) return { persons: [], distinctIds: [] };
    const { rows: distinctIds } = await client.query<DistinctIdChange>(
      `SELECT d.distinct_id AS "distinctId", p.uuid AS "personUuid", d.version + ${TOMBSTONE_STEP} AS version
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.person_id = ANY($1::bigint[])`,
      [persons.map((p) => p.id)],
    );
    await client.query('DELETE FROM persons WHERE id = ANY($1::bigint[])', [persons.map((p) => p.id)]);
    const tombstones = persons.map((p) => ({ ...p, version: p.version + TOMBSTONE_STEP }));
    await client.query(
      `INSERT INTO person_tombstones (uuid, team_id, version) SELECT unnest($1::uuid[]), $2, unnest($3::bigint[])
       ON CONFLICT (uuid) DO UPDATE SET version = GREATEST(person_tombstones.version, EXCLUDED.version)`,
      [tombstones.map((p) => p.uuid), teamId, tombstones.map((p) => p.version)],
    );
    await client.query(
      `INSERT INTO distinct_id_tombstones (team_id, distinct_id, version) SELECT $1, unnest($2::text[]), unnest($3::bigint[])
       ON CONFLICT (team_id, distinct_id) DO UPDATE SET version = GREATEST(distinct_id_tombstones.version, EXCLUDED.version)`,
      [teamId, distinctIds.map((d) => d.distinctId), distinctIds.map((d) => d.version)],
    );
    return { persons: tombstones, distinctIds };
  }

  /** Locks one person for a change that must not interleave with ingest's merges. */
  async lock(client: PoolClient, teamId: number, id: number): Promise<PersonRecord | null> {
    const { rows } = await client.query<PersonRecord>(`${SELECT} WHERE p.team_id = $1 AND p.id = $2 FOR UPDATE OF p`, [teamId, id]);
    return rows[0] ?? null;
  }

  /**
   * Gives a distinct id a person of its own with the given uuid (created empty, or reused when a
   * retried split made it already) and moves the id to it, bumping the id's version.
   */
  async moveToOwnPerson(client: PoolClient, teamId: number, distinctId: string, uuid: string, minVersion: number): Promise<{ person: PersonRecord; distinctId: DistinctIdChange }> {
    await client.query(
      `INSERT INTO persons (uuid, team_id, properties, is_identified, created_at, version)
       VALUES ($1, $2, '{}', false, now(), GREATEST($3, COALESCE((SELECT version + 1 FROM person_tombstones WHERE uuid = $1), 0)))
       ON CONFLICT (uuid) DO NOTHING`,
      [uuid, teamId, minVersion],
    );
    const { rows: moved } = await client.query<{ version: number }>(
      `UPDATE person_distinct_ids SET person_id = (SELECT id FROM persons WHERE uuid = $3), version = version + 1
        WHERE team_id = $1 AND distinct_id = $2 RETURNING version`,
      [teamId, distinctId, uuid],
    );
    const { rows } = await client.query<PersonRecord>(`${SELECT} WHERE p.uuid = $1`, [uuid]);
    return { person: rows[0]!, distinctId: { distinctId, personUuid: uuid, version: moved[0]!.version } };
  }
}
