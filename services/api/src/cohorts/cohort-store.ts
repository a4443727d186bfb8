import { announceFlagChange } from '@tributary/control-plane';
import { withTransaction, type Pool, type PoolClient } from '@tributary/postgres';
import type { Redis } from '@tributary/redis';
import type { CohortFilterGroup } from '@tributary/flags';
import type { CsvIdKind } from './cohort-csv.js';

/** A dynamic cohort's definition as stored: its groups of conditions. */
export interface CohortFilters {
  properties: CohortFilterGroup;
}

export interface CohortRecord {
  id: number;
  team_id: number;
  name: string;
  description: string;
  is_static: boolean;
  filters: CohortFilters | Record<string, never>;
  deleted: boolean;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
  /**
   * Members of a static cohort, or of a behavioural one as last calculated; null for one of
   * person properties only, whose members are whoever matches now, and before a first calculation.
   */
  count: number | null;
  /** A behavioural cohort's calculation, as the worker records it (PostHog's fields). */
  is_calculating: boolean;
  last_calculation: Date | null;
  errors_calculating: number;
}

export interface CohortInput {
  name: string;
  description: string;
  is_static: boolean;
  filters: CohortFilters | Record<string, never>;
}

/** Persons named in a static cohort's upload or body: by distinct id, email or person uuid. */
export interface NamedPersons {
  kind: CsvIdKind;
  ids: readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The ids of the project's persons that `named` names, as SQL over `$2` (the project) and `$3`
 * (the names): a name of another project's person names no one.
 */
function namedPersonIds(named: NamedPersons): { sql: string; names: string[] } {
  switch (named.kind) {
    case 'distinct_id':
      return { sql: 'SELECT person_id AS id FROM person_distinct_ids WHERE team_id = $2 AND distinct_id = ANY($3::text[])', names: [...named.ids] };
    case 'email':
      return { sql: "SELECT id FROM persons WHERE team_id = $2 AND lower(properties ->> 'email') = ANY($3::text[])", names: named.ids.map((e) => e.toLowerCase()) };
    case 'person_id':
      return { sql: 'SELECT id FROM persons WHERE team_id = $2 AND uuid = ANY($3::uuid[])', names: named.ids.filter((id) => UUID.test(id)) };
  }
}

const COLUMNS = `c.id, c.team_id, c.name, c.description, c.is_static, c.filters, c.deleted, c.created_by, c.created_at, c.updated_at,
  CASE WHEN c.is_static THEN (SELECT count(*)::int FROM cohort_people p WHERE p.cohort_id = c.id) ELSE c.calculated_count END AS count,
  c.is_calculating, c.last_calculation, c.errors_calculating`;
const SELECT = `SELECT ${COLUMNS} FROM cohorts c`;

/**
 * Cohorts and static cohort membership in Postgres, where decide and the events API read them.
 * Flags target cohorts, so every change is announced to decide as a change of the project's flags.
 */
export class CohortStore {
  constructor(
    private readonly pool: Pool,
    private readonly redis: Pick<Redis, 'publish'>,
  ) {}

  async list(teamId: number, limit: number, offset: number): Promise<{ count: number; results: CohortRecord[] }> {
    const [{ rows }, count] = await Promise.all([
      this.pool.query<CohortRecord>(`${SELECT} WHERE c.team_id = $1 AND NOT c.deleted ORDER BY c.id DESC LIMIT $2 OFFSET $3`, [teamId, limit, offset]),
      this.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM cohorts WHERE team_id = $1 AND NOT deleted', [teamId]),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async get(teamId: number, id: number, db: Pool | PoolClient = this.pool): Promise<CohortRecord | null> {
    const { rows } = await db.query<CohortRecord>(`${SELECT} WHERE c.team_id = $1 AND c.id = $2 AND NOT c.deleted`, [teamId, id]);
    return rows[0] ?? null;
  }

  /** `members` are a static cohort's first members; names no person of the project has are skipped, as PostHog's CSV upload does. */
  async create(teamId: number, input: CohortInput, members: NamedPersons | undefined, createdBy: number | null): Promise<CohortRecord> {
    const created = await withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: number }>(
        'INSERT INTO cohorts (team_id, name, description, is_static, filters, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
        [teamId, input.name, input.description, input.is_static, input.filters, createdBy],
      );
      const id = rows[0]!.id;
      if (members) await this.addNamed(client, teamId, id, members);
      return (await this.get(teamId, id, client))!;
    });
    await announceFlagChange(this.redis, teamId);
    return created;
  }

  /**
   * `members` replace a static cohort's members (a body's `distinct_ids`, so one field both adds
   * and removes persons) or, with `append` (a CSV upload, as PostHog's), are added to them.
   */
  async update(teamId: number, id: number, changes: Partial<Omit<CohortInput, 'is_static'>>, members: (NamedPersons & { append: boolean }) | undefined): Promise<CohortRecord | null> {
    const updated = await withTransaction(this.pool, async (client) => {
      const result = await client.query(
        `UPDATE cohorts SET name = COALESCE($3, name), description = COALESCE($4, description), filters = COALESCE($5, filters), updated_at = now()
         WHERE team_id = $1 AND id = $2 AND NOT deleted`,
        [teamId, id, changes.name ?? null, changes.description ?? null, changes.filters ?? null],
      );
      if (result.rowCount !== 1) return null;
      if (members) {
        if (!members.append) await client.query('DELETE FROM cohort_people WHERE cohort_id = $1', [id]);
        await this.addNamed(client, teamId, id, members);
      }
      return this.get(teamId, id, client);
    });
    if (updated) await announceFlagChange(this.redis, teamId);
    return updated;
  }

  /**
   * Every live cohort, oldest first, with whether the person is listed in it: a static cohort's
   * members, or a behavioural one's as last calculated.
   */
  async listWithListing(teamId: number, personId: number): Promise<{ cohort: CohortRecord; listed: boolean }[]> {
    const { rows } = await this.pool.query<CohortRecord & { listed: boolean }>(
      `SELECT ${COLUMNS},
         EXISTS (SELECT 1 FROM cohort_people cp WHERE cp.cohort_id = c.id AND cp.person_id = $2)
           OR EXISTS (SELECT 1 FROM cohort_calculated_people m WHERE m.cohort_id = c.id AND m.version = c.version AND m.person_id = $2) AS listed
         FROM cohorts c WHERE c.team_id = $1 AND NOT c.deleted ORDER BY c.id`,
      [teamId, personId],
    );
    return rows.map(({ listed, ...cohort }) => ({ cohort, listed }));
  }

  /** The live cohorts among `ids`, as the events API's cohort filter needs them. */
  async definitions(teamId: number, ids: readonly number[]): Promise<Pick<CohortRecord, 'id' | 'is_static' | 'filters'>[]> {
    const { rows } = await this.pool.query<CohortRecord>('SELECT id, is_static, filters FROM cohorts WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted', [teamId, ids]);
    return rows;
  }

  /** The project's live cohorts named one of `names` (HogQL's `IN COHORT 'name'`). */
  async idsByName(teamId: number, names: readonly string[]): Promise<{ id: number; name: string }[]> {
    if (names.length === 0) return [];
    const { rows } = await this.pool.query<{ id: number; name: string }>('SELECT id, name FROM cohorts WHERE team_id = $1 AND name = ANY($2::text[]) AND NOT deleted ORDER BY id', [teamId, names]);
    return rows;
  }

  /**
   * Each live cohort among `ids` with its version, its `updated_at` to the microsecond: every edit of
   * its filters or members and its deletion go through this store, which moves it.
   */
  async versions(teamId: number, ids: readonly number[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<{ version: string }>(
      "SELECT id || '@' || updated_at::text AS version FROM cohorts WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted ORDER BY id",
      [teamId, ids],
    );
    return rows.map((r) => r.version);
  }

  /** Distinct ids of a static cohort's members, each of their ids, so events sent before a merge count too. */
  async memberDistinctIds(cohortId: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ distinct_id: string }>(
      'SELECT d.distinct_id FROM cohort_people c JOIN person_distinct_ids d ON d.person_id = c.person_id WHERE c.cohort_id = $1',
      [cohortId],
    );
    return rows.map((r) => r.distinct_id);
  }

  async softDelete(teamId: number, id: number): Promise<boolean> {
    const result = await this.pool.query('UPDATE cohorts SET deleted = true, updated_at = now() WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id]);
    if (result.rowCount !== 1) return false;
    await announceFlagChange(this.redis, teamId);
    return true;
  }

  /**
   * Adds the project's persons named to a live static cohort of the project, in one statement;
   * returns how many persons the names matched (0 when the cohort is not such a cohort).
   */
  async addPersons(teamId: number, cohortId: number, named: NamedPersons): Promise<number> {
    const matched = await this.addNamed(this.pool, teamId, cohortId, named);
    await this.touched(teamId, cohortId);
    return matched;
  }

  /** Takes one of the project's persons, by uuid, out of a static cohort of the project; whether the person exists. */
  async removePerson(teamId: number, cohortId: number, personUuid: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ id: number }>('SELECT id FROM persons WHERE team_id = $1 AND uuid = $2', [teamId, personUuid]);
    if (!rows[0]) return false;
    await this.pool.query('DELETE FROM cohort_people cp USING cohorts c WHERE cp.cohort_id = $1 AND cp.person_id = $2 AND c.id = cp.cohort_id AND c.team_id = $3', [
      cohortId,
      rows[0].id,
      teamId,
    ]);
    await this.touched(teamId, cohortId);
    return true;
  }

  /** A change of members is a change of the flags that target the cohort. */
  private async touched(teamId: number, cohortId: number): Promise<void> {
    await this.pool.query('UPDATE cohorts SET updated_at = now() WHERE team_id = $1 AND id = $2', [teamId, cohortId]);
    await announceFlagChange(this.redis, teamId);
  }

  private async addNamed(db: Pool | PoolClient, teamId: number, cohortId: number, named: NamedPersons): Promise<number> {
    const { sql, names } = namedPersonIds(named);
    const { rows } = await db.query<{ matched: number }>(
      `WITH named AS (SELECT DISTINCT id FROM (${sql}) n),
            added AS (
              INSERT INTO cohort_people (cohort_id, person_id)
              SELECT $1::int, id FROM named WHERE EXISTS (SELECT 1 FROM cohorts WHERE id = $1 AND team_id = $2 AND is_static AND NOT deleted)
              ON CONFLICT DO NOTHING)
       SELECT count(*)::int AS matched FROM named`,
      [cohortId, teamId, names],
    );
    return rows[0]!.matched;
  }
}
