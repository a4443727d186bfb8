import type { Pool } from '@tributary/postgres';
import { USER_COLUMNS, type UserColumns } from '../organizations/organization-user.js';

export const ANNOTATION_SCOPES = ['dashboard_item', 'dashboard', 'project', 'organization'] as const;
export const CREATION_TYPES = ['USR', 'GIT'] as const;

export interface AnnotationRow extends Partial<UserColumns> {
  id: number;
  team_id: number;
  content: string;
  date_marker: Date | null;
  creation_type: (typeof CREATION_TYPES)[number];
  scope: (typeof ANNOTATION_SCOPES)[number];
  insight_id: number | null;
  insight_short_id: string | null;
  insight_name: string | null;
  dashboard_id: number | null;
  dashboard_name: string | null;
  deleted: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface AnnotationInput {
  content: string;
  date_marker: string | null;
  creation_type: AnnotationRow['creation_type'];
  scope: AnnotationRow['scope'];
  insight_id: number | null;
  dashboard_id: number | null;
  deleted: boolean;
}

/** The project a request is for: its annotations, and its organization's organization-wide ones. */
export interface AnnotationProject {
  id: number;
  organization_id: string;
}

// The insight and dashboard are read only within the annotation's own project.
const SELECT = `SELECT a.id, a.team_id, a.content, a.date_marker, a.creation_type, a.scope, a.insight_id, i.short_id AS insight_short_id,
    i.name AS insight_name, a.dashboard_id, d.name AS dashboard_name, a.deleted, a.created_at, a.updated_at, ${USER_COLUMNS}
  FROM annotations a
  LEFT JOIN insights i ON i.id = a.insight_id AND i.team_id = a.team_id
  LEFT JOIN dashboards d ON d.id = a.dashboard_id AND d.team_id = a.team_id
  LEFT JOIN users u ON u.id = a.created_by`;

/** What a project sees, as PostHog: its own annotations and its organization's organization-wide ones. */
const VISIBLE = "(a.team_id = $1 OR (a.scope = 'organization' AND a.organization_id = $2))";

/** `%`, `_` and `\` stand for themselves in a search. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Annotations in Postgres. Deleting one is a soft delete, which a PATCH can undo, as PostHog's. */
export class AnnotationStore {
  constructor(private readonly pool: Pool) {}

  /** Live annotations, newest date first; `search` keeps those whose content contains it. */
  async list(project: AnnotationProject, filter: { search?: string; limit: number; offset: number }): Promise<{ count: number; results: AnnotationRow[] }> {
    const params: unknown[] = [project.id, project.organization_id];
    let where = `${VISIBLE} AND NOT a.deleted`;
    if (filter.search !== undefined) {
      params.push(likePattern(filter.search));
      where += ` AND a.content ILIKE $${params.length}`;
    }
    const [{ rows }, count] = await Promise.all([
      this.pool.query<AnnotationRow>(`${SELECT} WHERE ${where} ORDER BY a.date_marker DESC NULLS LAST, a.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [
        ...params,
        filter.limit,
        filter.offset,
      ]),
      this.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM annotations a WHERE ${where}`, params),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  /** One visible annotation; a deleted one only when asked for (a PATCH may restore it). */
  async get(project: AnnotationProject, id: number, includeDeleted = false): Promise<AnnotationRow | null> {
    const { rows } = await this.pool.query<AnnotationRow>(`${SELECT} WHERE ${VISIBLE} AND a.id = $3${includeDeleted ? '' : ' AND NOT a.deleted'}`, [project.id, project.organization_id, id]);
    return rows[0] ?? null;
  }

  async create(project: AnnotationProject, input: AnnotationInput, createdBy: number | null): Promise<AnnotationRow> {
    const { rows } = await this.pool.query<{ id: number }>(
      `INSERT INTO annotations (team_id, organization_id, content, date_marker, creation_type, scope, insight_id, dashboard_id, deleted, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [project.id, project.organization_id, input.content, input.date_marker, input.creation_type, input.scope, input.insight_id, input.dashboard_id, input.deleted, createdBy],
    );
    return (await this.get(project, rows[0]!.id, true))!;
  }

  /** Changes a visible annotation (deleted or not); null when there is none. */
  async update(project: AnnotationProject, id: number, changes: Partial<AnnotationInput>): Promise<AnnotationRow | null> {
    const columns = (['content', 'date_marker', 'creation_type', 'scope', 'insight_id', 'dashboard_id', 'deleted'] as const).filter((c) => changes[c] !== undefined);
    const sets = columns.map((c, i) => `${c} = $${i + 4}`);
    const result = await this.pool.query(
      `UPDATE annotations a SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE ${VISIBLE} AND a.id = $3`,
      [project.id, project.organization_id, id, ...columns.map((c) => changes[c])],
    );
    return result.rowCount === 1 ? this.get(project, id, true) : null;
  }

  /** Whether the project has this live insight / dashboard, which an annotation may then name. */
  async hasInsight(teamId: number, id: number): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM insights WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id]);
    return rowCount === 1;
  }

  async hasDashboard(teamId: number, id: number): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM dashboards WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id]);
    return rowCount === 1;
  }
}
