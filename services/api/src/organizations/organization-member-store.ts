import type { Pool } from '@tributary/postgres';
import { USER_COLUMNS, type UserColumns } from './organization-user.js';

export interface OrganizationMemberRow extends UserColumns {
  id: string;
  organization_id: string;
  level: number;
  joined_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT m.id, m.organization_id, m.level, m.joined_at, m.updated_at, ${USER_COLUMNS}
  FROM organization_memberships m JOIN users u ON u.id = m.user_id`;

/** Organization memberships with their users, as the members endpoints show them. */
export class OrganizationMemberStore {
  constructor(private readonly pool: Pool) {}

  /**
   * PostHog's `@current`: users here have no "current organization" setting, so it is the one the
   * user joined first, among those the key's projects belong to when the key is limited.
   */
  async currentOrganizationId(userId: number, scopedProjects: number[] | null): Promise<string | null> {
    const { rows } = await this.pool.query<{ organization_id: string }>(
      `SELECT m.organization_id FROM organization_memberships m
       WHERE m.user_id = $1 AND ($2::int[] IS NULL OR m.organization_id IN (SELECT organization_id FROM projects WHERE id = ANY($2)))
       ORDER BY m.joined_at, m.id LIMIT 1`,
      [userId, scopedProjects],
    );
    return rows[0]?.organization_id ?? null;
  }

  /** Whether the key may see this organization: its user is a member, and a limited key holds one of its projects. */
  async canSee(organizationId: string, userId: number, scopedProjects: number[] | null): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `SELECT 1 FROM organization_memberships m
       WHERE m.organization_id = $1 AND m.user_id = $2 AND ($3::int[] IS NULL OR m.organization_id IN (SELECT organization_id FROM projects WHERE id = ANY($3)))`,
      [organizationId, userId, scopedProjects],
    );
    return rowCount === 1;
  }

  async list(organizationId: string, limit: number, offset: number): Promise<{ count: number; results: OrganizationMemberRow[] }> {
    const [{ rows }, count] = await Promise.all([
      this.pool.query<OrganizationMemberRow>(`${SELECT} WHERE m.organization_id = $1 ORDER BY m.joined_at, m.id LIMIT $2 OFFSET $3`, [organizationId, limit, offset]),
      this.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM organization_memberships WHERE organization_id = $1', [organizationId]),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async find(organizationId: string, membershipId: string): Promise<OrganizationMemberRow | null> {
    const { rows } = await this.pool.query<OrganizationMemberRow>(`${SELECT} WHERE m.organization_id = $1 AND m.id = $2`, [organizationId, membershipId]);
    return rows[0] ?? null;
  }
}
