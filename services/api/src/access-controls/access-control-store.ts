import { v4 as uuidv4 } from 'uuid';
import type { Pool } from '@tributary/postgres';
import type { AccessLevel } from '@tributary/auth';

export type ResourceKind = 'dashboard' | 'feature_flag';

export interface AccessControlRow {
  id: string;
  resource: ResourceKind;
  resource_id: string;
  organization_member: string | null;
  access_level: AccessLevel;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, resource, resource_id, organization_member, access_level, created_by, created_at, updated_at';

/** Access entries per resource: one per organization member, plus the default (no member). */
export class AccessControlStore {
  constructor(private readonly pool: Pool) {}

  async list(teamId: number, resource: ResourceKind, resourceId: number): Promise<AccessControlRow[]> {
    const { rows } = await this.pool.query<AccessControlRow>(
      `SELECT ${COLUMNS} FROM access_controls WHERE team_id = $1 AND resource = $2 AND resource_id = $3 ORDER BY organization_member NULLS FIRST, created_at`,
      [teamId, resource, String(resourceId)],
    );
    return rows;
  }

  /** A null level removes the entry, so the member falls back to the default again. */
  async set(teamId: number, resource: ResourceKind, resourceId: number, member: string | null, level: AccessLevel | null, createdBy: number): Promise<void> {
    if (level === null) {
      await this.pool.query(
        'DELETE FROM access_controls WHERE team_id = $1 AND resource = $2 AND resource_id = $3 AND organization_member IS NOT DISTINCT FROM $4',
        [teamId, resource, String(resourceId), member],
      );
      return;
    }
    await this.pool.query(
      `INSERT INTO access_controls (id, team_id, resource, resource_id, organization_member, access_level, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (team_id, resource, resource_id, organization_member) DO UPDATE SET access_level = EXCLUDED.access_level, updated_at = now()`,
      [uuidv4(), teamId, resource, String(resourceId), member, level, createdBy],
    );
  }

  /** The entry naming the member and the default entry of one resource. */
  async entriesFor(teamId: number, resource: ResourceKind, resourceId: number, member: string): Promise<{ memberEntry: AccessLevel | null; defaultEntry: AccessLevel | null }> {
    const { rows } = await this.pool.query<{ organization_member: string | null; access_level: AccessLevel }>(
      `SELECT organization_member, access_level FROM access_controls
       WHERE team_id = $1 AND resource = $2 AND resource_id = $3 AND (organization_member IS NULL OR organization_member = $4)`,
      [teamId, resource, String(resourceId), member],
    );
    return {
      memberEntry: rows.find((r) => r.organization_member !== null)?.access_level ?? null,
      defaultEntry: rows.find((r) => r.organization_member === null)?.access_level ?? null,
    };
  }

  /** Resources whose entries leave the member no access; their creators still see them. */
  async noAccessIds(teamId: number, resource: ResourceKind, member: string): Promise<number[]> {
    const { rows } = await this.pool.query<{ resource_id: string }>(
      `SELECT resource_id FROM access_controls
       WHERE team_id = $1 AND resource = $2 AND (organization_member IS NULL OR organization_member = $3)
       GROUP BY resource_id
       HAVING COALESCE(max(access_level) FILTER (WHERE organization_member IS NOT NULL), max(access_level)) = 'none'`,
      [teamId, resource, member],
    );
    return rows.map((r) => Number(r.resource_id));
  }
}
