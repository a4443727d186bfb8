import { withTransaction, type Pool, type PoolClient } from '@tributary/postgres';
import { InsightStore } from '../insights/insight-store.js';
import { USER_COLUMNS, type UserColumns } from '../organizations/organization-user.js';
import type { TemplateTile } from './dashboard-template.js';

export interface DashboardFields {
  name: string;
  description: string;
  pinned: boolean;
  filters: Record<string, unknown>;
  tags: string[];
  restriction_level: number;
}

export interface DashboardRow extends Partial<UserColumns>, DashboardFields {
  id: number;
  team_id: number;
  creation_mode: 'default' | 'template' | 'duplicate';
  deleted: boolean;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface TileRow {
  id: number;
  layouts: Record<string, unknown>;
  color: string | null;
  insight_id: number;
}

const SELECT = `SELECT d.id, d.team_id, d.name, d.description, d.pinned, d.filters, d.tags, d.restriction_level, d.creation_mode,
  d.deleted, d.created_by, d.created_at, d.updated_at, ${USER_COLUMNS}
  FROM dashboards d LEFT JOIN users u ON u.id = d.created_by`;

type Db = Pool | PoolClient;

/** Dashboards, their tiles and the insights on them. */
export class DashboardStore {
  private readonly insights: InsightStore;

  constructor(private readonly pool: Pool) {
    this.insights = new InsightStore(pool);
  }

  /** `hidden`: ids the caller may not see, unless they created them. */
  async list(teamId: number, limit: number, offset: number, hidden: { ids: number[]; exceptCreatedBy: number }): Promise<{ count: number; results: DashboardRow[] }> {
    const where = 'd.team_id = $1 AND NOT d.deleted AND (NOT d.id = ANY($2::int[]) OR d.created_by IS NOT DISTINCT FROM $3)';
    const params = [teamId, hidden.ids, hidden.exceptCreatedBy];
    const [{ rows }, count] = await Promise.all([
      this.pool.query<DashboardRow>(`${SELECT} WHERE ${where} ORDER BY d.pinned DESC, d.name, d.id LIMIT $4 OFFSET $5`, [...params, limit, offset]),
      this.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM dashboards d WHERE ${where}`, params),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async get(teamId: number, id: number, db: Db = this.pool): Promise<DashboardRow | null> {
    const { rows } = await db.query<DashboardRow>(`${SELECT} WHERE d.team_id = $1 AND d.id = $2 AND NOT d.deleted`, [teamId, id]);
    return rows[0] ?? null;
  }

  /** Tiles whose insight is still live, in the order they were added. */
  async tiles(dashboardId: number, db: Db = this.pool): Promise<TileRow[]> {
    const { rows } = await db.query<TileRow>(
      `SELECT t.id, t.layouts, t.color, t.insight_id
       FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id AND NOT i.deleted
       WHERE t.dashboard_id = $1 ORDER BY t.id`,
      [dashboardId],
    );
    return rows;
  }

  /** The dashboard, one new insight per template tile and the tiles, all or nothing; no template is an empty dashboard. */
  async createFromTemplate(teamId: number, fields: DashboardFields, tiles: TemplateTile[] | null, createdBy: number): Promise<DashboardRow> {
    return withTransaction(this.pool, async (client) => {
      const id = await this.insert(client, teamId, fields, tiles ? 'template' : 'default', createdBy);
      for (const tile of tiles ?? []) {
        const insightId = await this.insights.insert(
          client,
          teamId,
          { name: tile.name, description: tile.description, query: tile.query ?? null, filters: tile.filters ?? {}, tags: [], favorited: false, saved: true },
          createdBy,
        );
        await client.query('INSERT INTO dashboard_tiles (dashboard_id, insight_id, layouts, color) VALUES ($1, $2, $3, $4)', [id, insightId, tile.layouts, tile.color]);
      }
      return (await this.get(teamId, id, client))!;
    });
  }

  /** New tiles for the source's insights: the copy shows the same insights rather than copies of them. */
  async duplicate(teamId: number, fields: DashboardFields, sourceId: number, createdBy: number): Promise<DashboardRow> {
    return withTransaction(this.pool, async (client) => {
      const id = await this.insert(client, teamId, fields, 'duplicate', createdBy);
      await client.query(
        `INSERT INTO dashboard_tiles (dashboard_id, insight_id, layouts, color)
         SELECT $1, t.insight_id, t.layouts, t.color FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id AND NOT i.deleted
         WHERE t.dashboard_id = $2 ORDER BY t.id`,
        [id, sourceId],
      );
      return (await this.get(teamId, id, client))!;
    });
  }

  async update(teamId: number, id: number, changes: Partial<DashboardFields>): Promise<DashboardRow | null> {
    const result = await this.pool.query(
      `UPDATE dashboards SET name = COALESCE($3, name), description = COALESCE($4, description), pinned = COALESCE($5, pinned),
         filters = COALESCE($6, filters), tags = COALESCE($7, tags), restriction_level = COALESCE($8, restriction_level), updated_at = now()
       WHERE team_id = $1 AND id = $2 AND NOT deleted`,
      [teamId, id, changes.name ?? null, changes.description ?? null, changes.pinned ?? null, changes.filters ?? null, changes.tags ?? null, changes.restriction_level ?? null],
    );
    return result.rowCount === 1 ? this.get(teamId, id) : null;
  }

  /**
   * `deleteInsights` also deletes the dashboard's insights, except those another live dashboard
   * still shows, as PostHog's `delete_insights` does.
   */
  async softDelete(teamId: number, id: number, deleteInsights: boolean): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const result = await client.query('UPDATE dashboards SET deleted = true, updated_at = now() WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id]);
      if (result.rowCount !== 1) return false;
      if (deleteInsights) {
        await client.query(
          `UPDATE insights i SET deleted = true, updated_at = now()
           WHERE i.team_id = $1 AND NOT i.deleted AND i.id IN (SELECT insight_id FROM dashboard_tiles WHERE dashboard_id = $2)
             AND NOT EXISTS (SELECT 1 FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id WHERE t.insight_id = i.id AND NOT d.deleted)`,
          [teamId, id],
        );
      }
      return true;
    });
  }

  private async insert(client: PoolClient, teamId: number, fields: DashboardFields, mode: DashboardRow['creation_mode'], createdBy: number): Promise<number> {
    const { rows } = await client.query<{ id: number }>(
      `INSERT INTO dashboards (team_id, name, description, pinned, filters, tags, restriction_level, creation_mode, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [teamId, fields.name, fields.description, fields.pinned, fields.filters, fields.tags, fields.restriction_level, mode, createdBy],
    );
    return rows[0]!.id;
  }
}
