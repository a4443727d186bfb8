import type { Pool } from '@tributary/postgres';
import type { Redis } from '@tributary/redis';
import { announceFlagChange } from './flag-changes.js';

export interface FeatureFlagRecord {
  id: number;
  team_id: number;
  key: string;
  name: string;
  filters: Record<string, unknown>;
  active: boolean;
  deleted: boolean;
  ensure_experience_continuity: boolean;
  version: number;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface FeatureFlagInput {
  key: string;
  name: string;
  filters: Record<string, unknown>;
  active: boolean;
  ensure_experience_continuity: boolean;
}

const COLUMNS = 'id, team_id, key, name, filters, active, deleted, ensure_experience_continuity, version, created_by, created_at, updated_at';

export class DuplicateFlagKeyError extends Error {}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

/** Flag definitions in Postgres; every change is announced to decide (see announceFlagChange). */
export class FeatureFlagStore {
  constructor(
    private readonly db: Pool,
    private readonly redis: Pick<Redis, 'publish'>,
  ) {}

  /** `hidden`: flags the caller's access controls leave out, except the ones they created. */
  async list(teamId: number, limit: number, offset: number, hidden: { ids: number[]; exceptCreatedBy: number }): Promise<{ count: number; results: FeatureFlagRecord[] }> {
    const where = 'team_id = $1 AND NOT deleted AND (NOT id = ANY($2::int[]) OR created_by IS NOT DISTINCT FROM $3)';
    const params = [teamId, hidden.ids, hidden.exceptCreatedBy];
    const [{ rows }, count] = await Promise.all([
      this.db.query<FeatureFlagRecord>(`SELECT ${COLUMNS} FROM feature_flags WHERE ${where} ORDER BY id DESC LIMIT $4 OFFSET $5`, [...params, limit, offset]),
      this.db.query<{ count: number }>(`SELECT count(*)::int AS count FROM feature_flags WHERE ${where}`, params),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  /** Every live flag of a project, active or not: decide answers inactive ones with false. */
  async liveForTeam(teamId: number): Promise<FeatureFlagRecord[]> {
    const { rows } = await this.db.query<FeatureFlagRecord>(`SELECT ${COLUMNS} FROM feature_flags WHERE team_id = $1 AND NOT deleted ORDER BY id`, [teamId]);
    return rows;
  }

  async get(teamId: number, id: number): Promise<FeatureFlagRecord | null> {
    const { rows } = await this.db.query<FeatureFlagRecord>(`SELECT ${COLUMNS} FROM feature_flags WHERE team_id = $1 AND id = $2 AND NOT deleted`, [teamId, id]);
    return rows[0] ?? null;
  }

  /** The project's live flag of this key: keys are unique among a project's live flags. */
  async getByKey(teamId: number, key: string): Promise<FeatureFlagRecord | null> {
    const { rows } = await this.db.query<FeatureFlagRecord>(`SELECT ${COLUMNS} FROM feature_flags WHERE team_id = $1 AND key = $2 AND NOT deleted`, [teamId, key]);
    return rows[0] ?? null;
  }

  async create(teamId: number, input: FeatureFlagInput, createdBy: number | null): Promise<FeatureFlagRecord> {
    try {
      const { rows } = await this.db.query<FeatureFlagRecord>(
        `INSERT INTO feature_flags (team_id, key, name, filters, active, ensure_experience_continuity, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
        [teamId, input.key, input.name, input.filters, input.active, input.ensure_experience_continuity, createdBy],
      );
      await announceFlagChange(this.redis, teamId);
      return rows[0]!;
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateFlagKeyError(`There is already a feature flag with the key "${input.key}" in this project.`);
      throw error;
    }
  }

  async update(teamId: number, id: number, changes: Partial<FeatureFlagInput>): Promise<FeatureFlagRecord | null> {
    try {
      const { rows } = await this.db.query<FeatureFlagRecord>(
        `UPDATE feature_flags SET
           key = COALESCE($3, key), name = COALESCE($4, name), filters = COALESCE($5, filters),
           active = COALESCE($6, active), ensure_experience_continuity = COALESCE($7, ensure_experience_continuity),
           version = version + 1, updated_at = now()
         WHERE team_id = $1 AND id = $2 AND NOT deleted RETURNING ${COLUMNS}`,
        [teamId, id, changes.key ?? null, changes.name ?? null, changes.filters ?? null, changes.active ?? null, changes.ensure_experience_continuity ?? null],
      );
      if (rows[0]) await announceFlagChange(this.redis, teamId);
      return rows[0] ?? null;
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateFlagKeyError(`There is already a feature flag with the key "${changes.key}" in this project.`);
      throw error;
    }
  }

  async softDelete(teamId: number, id: number): Promise<boolean> {
    const result = await this.db.query('UPDATE feature_flags SET deleted = true, version = version + 1, updated_at = now() WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id]);
    if (result.rowCount !== 1) return false;
    await announceFlagChange(this.redis, teamId);
    return true;
  }
}
