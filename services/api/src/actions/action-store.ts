import type { ActionDefinition, ActionStep } from '@tributary/hogql';
import type { Pool } from '@tributary/postgres';
import { USER_COLUMNS, type UserColumns } from '../organizations/organization-user.js';

export interface ActionFields {
  name: string;
  description: string;
  tags: string[];
  steps: ActionStep[];
  post_to_slack: boolean;
  slack_message_format: string;
  pinned_at: string | null;
}

export interface ActionRow extends Partial<UserColumns>, ActionFields {
  id: number;
  team_id: number;
  deleted: boolean;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT a.id, a.team_id, a.name, a.description, a.tags, a.steps, a.post_to_slack, a.slack_message_format, a.pinned_at,
  a.deleted, a.created_by, a.created_at, a.updated_at, ${USER_COLUMNS}
  FROM actions a LEFT JOIN users u ON u.id = a.created_by`;

/** `ILIKE` matches the text as typed: its wildcards are escaped. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;

/** A project's actions in Postgres; every read and write names the project, so another project's id finds nothing. */
export class ActionStore {
  constructor(private readonly pool: Pool) {}

  /** Live actions, newest first; `search` narrows to those whose name contains it. */
  async list(teamId: number, limit: number, offset: number, search = ''): Promise<{ count: number; results: ActionRow[] }> {
    const where = 'a.team_id = $1 AND NOT a.deleted AND ($2 = \'\' OR a.name ILIKE $3)';
    const params = [teamId, search, likePattern(search)];
    const [{ rows }, count] = await Promise.all([
      this.pool.query<ActionRow>(`${SELECT} WHERE ${where} ORDER BY a.id DESC LIMIT $4 OFFSET $5`, [...params, limit, offset]),
      this.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM actions a WHERE ${where}`, params),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async get(teamId: number, id: number): Promise<ActionRow | null> {
    const { rows } = await this.pool.query<ActionRow>(`${SELECT} WHERE a.team_id = $1 AND a.id = $2 AND NOT a.deleted`, [teamId, id]);
    return rows[0] ?? null;
  }

  /** The id of the live action named `name`, other than `except`: names are unique in a project. */
  async idByName(teamId: number, name: string, except = 0): Promise<number | null> {
    const { rows } = await this.pool.query<{ id: number }>('SELECT id FROM actions WHERE team_id = $1 AND name = $2 AND NOT deleted AND id <> $3', [teamId, name, except]);
    return rows[0]?.id ?? null;
  }

  async create(teamId: number, fields: ActionFields, createdBy: number): Promise<ActionRow> {
    const { rows } = await this.pool.query<{ id: number }>(
      `INSERT INTO actions (team_id, name, description, tags, steps, post_to_slack, slack_message_format, pinned_at, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
      [teamId, fields.name, fields.description, fields.tags, JSON.stringify(fields.steps), fields.post_to_slack, fields.slack_message_format, fields.pinned_at, createdBy],
    );
    return (await this.get(teamId, rows[0]!.id))!;
  }

  /** Changes the fields given; `deleted: true` soft-deletes, as PostHog's PATCH does. Null when the project has no such live action. */
  async update(teamId: number, id: number, changes: Partial<ActionFields> & { deleted?: boolean }): Promise<ActionRow | null> {
    const { rows } = await this.pool.query<ActionRow>(
      `UPDATE actions SET name = COALESCE($3, name), description = COALESCE($4, description), tags = COALESCE($5, tags), steps = COALESCE($6, steps),
         post_to_slack = COALESCE($7, post_to_slack), slack_message_format = COALESCE($8, slack_message_format),
         pinned_at = CASE WHEN $9 THEN $10::timestamptz ELSE pinned_at END, deleted = COALESCE($11, deleted), updated_at = now()
       WHERE team_id = $1 AND id = $2 AND NOT deleted RETURNING id`,
      [
        teamId,
        id,
        changes.name ?? null,
        changes.description ?? null,
        changes.tags ?? null,
        changes.steps ? JSON.stringify(changes.steps) : null,
        changes.post_to_slack ?? null,
        changes.slack_message_format ?? null,
        changes.pinned_at !== undefined,
        changes.pinned_at ?? null,
        changes.deleted ?? null,
      ],
    );
    if (!rows[0]) return null;
    const { rows: updated } = await this.pool.query<ActionRow>(`${SELECT} WHERE a.team_id = $1 AND a.id = $2`, [teamId, id]);
    return updated[0]!;
  }

  /** The project's live actions among `ids` and `names` (what a query names), as the HogQL layer reads them. */
  async definitions(teamId: number, ids: readonly number[], names: readonly string[] = []): Promise<ActionDefinition[]> {
    if (ids.length === 0 && names.length === 0) return [];
    const { rows } = await this.pool.query<ActionDefinition>(
      'SELECT id, name, steps FROM actions WHERE team_id = $1 AND NOT deleted AND (id = ANY($2::int[]) OR name = ANY($3::text[]))',
      [teamId, ids, names],
    );
    return rows;
  }
}
