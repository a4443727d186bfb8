import { randomBytes } from 'node:crypto';
import { withTransaction, type Pool, type PoolClient } from '@tributary/postgres';
import { USER_COLUMNS, type UserColumns } from '../organizations/organization-user.js';

export interface InsightFields {
  name: string;
  description: string;
  query: Record<string, unknown> | null;
  filters: Record<string, unknown>;
  tags: string[];
  favorited: boolean;
  saved: boolean;
}

export interface InsightRow extends Partial<UserColumns>, InsightFields {
  id: number;
  short_id: string;
  team_id: number;
  deleted: boolean;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
  last_modified_at: Date;
  /** The live dashboards showing it, and the tiles that do. */
  dashboards: number[];
  tiles: { id: number; dashboard_id: number }[];
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** PostHog's 8-character insight short ids, as used in `/insights/<short_id>` links. */
const shortId = () => [...randomBytes(8)].map((b) => ALPHABET[b % ALPHABET.length]).join('');

const SELECT = `SELECT i.id, i.short_id, i.team_id, i.name, i.description, i.query, i.filters, i.tags, i.favorited, i.saved, i.deleted,
  i.created_by, i.created_at, i.updated_at, i.last_modified_at, ${USER_COLUMNS},
  COALESCE((SELECT array_agg(t.dashboard_id ORDER BY t.id) FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id AND NOT d.deleted WHERE t.insight_id = i.id), '{}') AS dashboards,
  COALESCE((SELECT json_agg(json_build_object('id', t.id, 'dashboard_id', t.dashboard_id) ORDER BY t.id) FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id AND NOT d.deleted WHERE t.insight_id = i.id), '[]') AS tiles
  FROM insights i LEFT JOIN users u ON u.id = i.created_by`;

export interface InsightListFilter {
  shortId?: string;
  favorited?: boolean;
  saved?: boolean;
  search?: string;
}

type Db = Pool | PoolClient;

/** Saved insights of a project, and which dashboards show them. */
export class InsightStore {
  constructor(private readonly pool: Pool) {}

  async list(teamId: number, filter: InsightListFilter, limit: number, offset: number): Promise<{ count: number; results: InsightRow[] }> {
    const where = ['i.team_id = $1', 'NOT i.deleted'];
    const params: unknown[] = [teamId];
    const add = (clause: (n: number) => string, value: unknown) => {
      params.push(value);
      where.push(clause(params.length));
    };
    if (filter.shortId !== undefined) add((n) => `i.short_id = $${n}`, filter.shortId);
    if (filter.favorited !== undefined) add((n) => `i.favorited = $${n}`, filter.favorited);
    if (filter.saved !== undefined) add((n) => `i.saved = $${n}`, filter.saved);
    if (filter.search !== undefined) add((n) => `(i.name ILIKE $${n} OR i.description ILIKE $${n})`, `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    const clause = where.join(' AND ');
    const [{ rows }, count] = await Promise.all([
      this.pool.query<InsightRow>(`${SELECT} WHERE ${clause} ORDER BY i.last_modified_at DESC, i.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [...params, limit, offset]),
      this.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM insights i WHERE ${clause}`, params),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async get(teamId: number, id: number, db: Db = this.pool): Promise<InsightRow | null> {
    const { rows } = await db.query<InsightRow>(`${SELECT} WHERE i.team_id = $1 AND i.id = $2 AND NOT i.deleted`, [teamId, id]);
    return rows[0] ?? null;
  }

  /** The live insights of these ids, by id. */
  async getMany(teamId: number, ids: number[]): Promise<Map<number, InsightRow>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.pool.query<InsightRow>(`${SELECT} WHERE i.team_id = $1 AND i.id = ANY($2::int[]) AND NOT i.deleted`, [teamId, ids]);
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** A new insight, on the given dashboards (which must be the project's live ones). */
  async create(teamId: number, fields: InsightFields, dashboards: number[], createdBy: number): Promise<InsightRow> {
    return withTransaction(this.pool, async (client) => {
      const id = await this.insert(client, teamId, fields, createdBy);
      await this.placeOn(client, teamId, id, dashboards);
      return (await this.get(teamId, id, client))!;
    });
  }

  async insert(db: Db, teamId: number, fields: InsightFields, createdBy: number): Promise<number> {
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO insights (short_id, team_id, name, description, query, filters, tags, favorited, saved, created_by, last_modified_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
      [shortId(), teamId, fields.name, fields.description, fields.query, fields.filters, fields.tags, fields.favorited, fields.saved, createdBy],
    );
    return rows[0]!.id;
  }

  /** Changes the given fields; `dashboards`, when given, is the whole set of dashboards to show it on. */
  async update(teamId: number, id: number, changes: Partial<InsightFields> & { deleted?: boolean }, dashboards: number[] | undefined, modifiedBy: number): Promise<InsightRow | null> {
    return withTransaction(this.pool, async (client) => {
      const result = await client.query(
        `UPDATE insights SET name = COALESCE($3, name), description = COALESCE($4, description), query = COALESCE($5, query),
           tags = COALESCE($6, tags), favorited = COALESCE($7, favorited), saved = COALESCE($8, saved), deleted = COALESCE($9, deleted),
           updated_at = now(), last_modified_at = now(), last_modified_by = $10
         WHERE team_id = $1 AND id = $2 AND NOT deleted`,
        [teamId, id, changes.name ?? null, changes.description ?? null, changes.query ?? null, changes.tags ?? null, changes.favorited ?? null, changes.saved ?? null, changes.deleted ?? null, modifiedBy],
      );
      if (result.rowCount !== 1) return null;
      if (dashboards !== undefined) {
        await client.query('DELETE FROM dashboard_tiles WHERE insight_id = $1 AND NOT dashboard_id = ANY($2::int[])', [id, dashboards]);
        await this.placeOn(client, teamId, id, dashboards);
      }
      return this.find(client, teamId, id);
    });
  }

  // Tiles are made in the order given, so an insight lists its dashboards in that order (tile ids).
  private async placeOn(client: PoolClient, teamId: number, insightId: number, dashboards: number[]): Promise<void> {
    await client.query(
      `INSERT INTO dashboard_tiles (dashboard_id, insight_id)
       SELECT d.id, $2 FROM dashboards d WHERE d.team_id = $1 AND d.id = ANY($3::int[]) AND NOT d.deleted
         AND NOT EXISTS (SELECT 1 FROM dashboard_tiles t WHERE t.dashboard_id = d.id AND t.insight_id = $2)
       ORDER BY array_position($3::int[], d.id)`,
      [teamId, insightId, dashboards],
    );
  }

  /** The insight whether or not it is deleted, as an update that deletes it answers it. */
  private async find(db: Db, teamId: number, id: number): Promise<InsightRow | null> {
    const { rows } = await db.query<InsightRow>(`${SELECT} WHERE i.team_id = $1 AND i.id = $2`, [teamId, id]);
    return rows[0] ?? null;
  }
}
