import { announceFlagChange } from '@tributary/control-plane';
import { withTransaction, type Pool, type PoolClient } from '@tributary/postgres';
import type { Redis } from '@tributary/redis';
import type { CohortFilters } from './cohort-filters.js';

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
  /** Members of a static cohort; null for a dynamic one, whose members are whoever matches now. */
  count: number | null;
}

export interface CohortInput {
  name: string;
  description: string;
  is_static: boolean;
  filters: CohortFilters | Record<string, never>;
}

const COLUMNS = `c.id, c.team_id, c.name, c.description, c.is_static, c.filters, c.deleted, c.created_by, c.created_at, c.updated_at,
  CASE WHEN c.is_static THEN (SELECT count(*)::int FROM cohort_people p WHERE p.cohort_id = c.id) END AS count`;
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

  /** `distinctIds` sets a static cohort's members; ids no person has are skipped, as PostHog's CSV upload does. */
  async create(teamId: number, input: CohortInput, distinctIds: string[] | undefined, createdBy: number | null): Promise<CohortRecord> {
    const created = await withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ id: number }>(
        'INSERT INTO cohorts (team_id, name, description, is_static, filters, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
        [teamId, input.name, input.description, input.is_static, input.filters, createdBy],
      );
      const id = rows[0]!.id;
      if (distinctIds) await this.setMembers(client, teamId, id, distinctIds);
      return (await this.get(teamId, id, client))!;
    });
    await announceFlagChange(this.redis, teamId);
    return created;
  }

  /** `distinctIds` replaces a static cohort's members, so one field both adds and removes persons. */
  async update(teamId: number, id: number, changes: Partial<Omit<CohortInput, 'is_static'>>, distinctIds: string[] | undefined): Promise<CohortRecord | null> {
    const updated = await withTransaction(this.pool, async (client) => {
      const result = await client.query(
        `UPDATE cohorts SET name = COALESCE($3, name), description = COALESCE($4, description), filters = COALESCE($5, filters), updated_at = now()
         WHERE team_id = $1 AND id = $2 AND NOT deleted`,
        [teamId, id, changes.name ?? null, changes.description ?? null, changes.filters ?? null],
      );
      if (result.rowCount !== 1) return null;
      if (distinctIds) {
        await client.query('DELETE FROM cohort_people WHERE cohort_id = $1', [id]);
        await this.setMembers(client, teamId, id, distinctIds);
      }
      return this.get(teamId, id, client);
    });
    if (updated) await announceFlagChange(this.redis, teamId);
    return updated;
  }

  /** Every live cohort, oldest first, with whether the person is listed in it (static membership). */
  async listWithListing(teamId: number, personId: number): Promise<{ cohort: CohortRecord; listed: boolean }[]> {
    const { rows } = await this.pool.query<CohortRecord & { listed: boolean }>(
      `SELECT ${COLUMNS}, EXISTS (SELECT 1 FROM cohort_people cp WHERE cp.cohort_id = c.id AND cp.person_id = $2) AS listed
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

  private async setMembers(client: PoolClient, teamId: number, cohortId: number, distinctIds: string[]): Promise<void> {
    await client.query(
      `INSERT INTO cohort_people (cohort_id, person_id)
       SELECT DISTINCT $1::int, person_id FROM person_distinct_ids WHERE team_id = $2 AND distinct_id = ANY($3::text[])
       ON CONFLICT DO NOTHING`,
      [cohortId, teamId, distinctIds],
    );
  }
}
