import { v4 as uuidv4 } from 'uuid';
import { withTransaction, type Pool, type PoolClient } from '@tributary/postgres';
import { USER_COLUMNS, type UserColumns } from '../organizations/organization-user.js';
import { PROJECT_ADMIN_LEVEL } from './project-roles.js';

export interface ExplicitMemberRow extends UserColumns {
  id: string;
  level: number;
  parent_level: number;
  parent_membership_id: string;
  joined_at: Date;
  updated_at: Date;
}

export class AlreadyMemberError extends Error {}
export class LastAdminError extends Error {}

const SELECT = `SELECT e.id, e.level, e.joined_at, e.updated_at, m.id AS parent_membership_id, m.level AS parent_level, ${USER_COLUMNS}
  FROM explicit_project_memberships e
  JOIN organization_memberships m ON m.id = e.parent_membership_id
  JOIN users u ON u.id = m.user_id`;

/** Explicit project memberships, each hanging off the member's organization membership. */
export class ExplicitMemberStore {
  constructor(private readonly pool: Pool) {}

  async list(teamId: number): Promise<ExplicitMemberRow[]> {
    const { rows } = await this.pool.query<ExplicitMemberRow>(`${SELECT} WHERE e.team_id = $1 ORDER BY e.joined_at, e.id`, [teamId]);
    return rows;
  }

  async find(teamId: number, userUuid: string, db: Pool | PoolClient = this.pool): Promise<ExplicitMemberRow | null> {
    const { rows } = await db.query<ExplicitMemberRow>(`${SELECT} WHERE e.team_id = $1 AND u.uuid = $2`, [teamId, userUuid]);
    return rows[0] ?? null;
  }

  /** The user's membership of the organization, which an explicit membership must hang off. */
  async organizationMembershipId(organizationId: string, userUuid: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ id: string }>(
      'SELECT m.id FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND u.uuid = $2',
      [organizationId, userUuid],
    );
    return rows[0]?.id ?? null;
  }

  async create(teamId: number, parentMembershipId: string, userUuid: string, level: number): Promise<ExplicitMemberRow> {
    return withTransaction(this.pool, async (client) => {
      const inserted = await client.query(
        `INSERT INTO explicit_project_memberships (id, team_id, parent_membership_id, level) VALUES ($1, $2, $3, $4)
         ON CONFLICT (team_id, parent_membership_id) DO NOTHING`,
        [uuidv4(), teamId, parentMembershipId, level],
      );
      if (inserted.rowCount !== 1) throw new AlreadyMemberError('This user is already an explicit member of the project.');
      return (await this.find(teamId, userUuid, client))!;
    });
  }

  /** Null when the user is not an explicit member. */
  async changeLevel(teamId: number, userUuid: string, level: number): Promise<ExplicitMemberRow | null> {
    return this.changeKeepingAnAdmin(teamId, userUuid, async (client, id) => {
      await client.query('UPDATE explicit_project_memberships SET level = $2, updated_at = now() WHERE id = $1', [id, level]);
      return this.find(teamId, userUuid, client);
    });
  }

  async remove(teamId: number, userUuid: string): Promise<boolean> {
    const removed = await this.changeKeepingAnAdmin(teamId, userUuid, async (client, id) => {
      await client.query('DELETE FROM explicit_project_memberships WHERE id = $1', [id]);
      return true;
    });
    return removed ?? false;
  }

  /**
   * Applies a change and rolls it back if nobody would be left with admin rights in the project.
   * The project row is locked so two admins demoting each other cannot both succeed.
   */
  private async changeKeepingAnAdmin<T>(teamId: number, userUuid: string, change: (client: PoolClient, id: string) => Promise<T>): Promise<T | null> {
    return withTransaction(this.pool, async (client) => {
      const { rows: projects } = await client.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = $1 FOR UPDATE', [teamId]);
      const existing = await this.find(teamId, userUuid, client);
      if (!existing || !projects[0]) return null;
      const result = await change(client, existing.id);
      const { rows } = await client.query<{ admins: number }>(
        `SELECT count(*)::int AS admins FROM organization_memberships m
         LEFT JOIN explicit_project_memberships e ON e.parent_membership_id = m.id AND e.team_id = $1
         WHERE m.organization_id = $2 AND GREATEST(m.level, COALESCE(e.level, 0)) >= $3`,
        [teamId, projects[0].organization_id, PROJECT_ADMIN_LEVEL],
      );
      if (rows[0]!.admins === 0) throw new LastAdminError('The project would be left without an admin: make someone else an admin first.');
      return result;
    });
  }
}
