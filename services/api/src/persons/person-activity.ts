import type { Pool, PoolClient } from '@tributary/postgres';

export type PersonActivity = 'updated' | 'deleted' | 'split' | 'merged';

export interface ActivityEntry {
  id: number;
  user: { id: number; uuid: string; email: string; first_name: string; last_name: string } | null;
  activity: string;
  scope: 'Person';
  item_id: string;
  detail: Record<string, unknown>;
  created_at: string;
}

interface ActivityRow {
  id: number;
  user_id: number | null;
  user_uuid: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  activity: string;
  item_id: string;
  detail: Record<string, unknown>;
  created_at: Date;
}

const present = (row: ActivityRow): ActivityEntry => ({
  id: row.id,
  user: row.user_id === null ? null : { id: row.user_id, uuid: row.user_uuid!, email: row.email!, first_name: row.first_name!, last_name: row.last_name! },
  activity: row.activity,
  scope: 'Person',
  item_id: row.item_id,
  detail: row.detail,
  created_at: row.created_at.toISOString(),
});

/** Who changed, split, merged or deleted which person: the `activity_log` rows of scope Person. */
export class PersonActivityLog {
  constructor(private readonly pool: Pool) {}

  async record(db: Pool | PoolClient, entry: { teamId: number; personId: number; activity: PersonActivity; userId: number | null; detail: Record<string, unknown> }): Promise<void> {
    await db.query(`INSERT INTO activity_log (team_id, scope, item_id, activity, user_id, detail) VALUES ($1, 'Person', $2, $3, $4, $5)`, [
      entry.teamId,
      String(entry.personId),
      entry.activity,
      entry.userId,
      entry.detail,
    ]);
  }

  async list(teamId: number, { limit, offset }: { limit: number; offset: number }, personId?: number): Promise<{ count: number; results: ActivityEntry[] }> {
    const params: unknown[] = [teamId];
    let where = `a.team_id = $1 AND a.scope = 'Person'`;
    if (personId !== undefined) {
      params.push(String(personId));
      where += ' AND a.item_id = $2';
    }
    const page = params.length;
    const [rows, count] = await Promise.all([
      this.pool.query<ActivityRow>(
        `SELECT a.id, a.user_id, u.uuid AS user_uuid, u.email, u.first_name, u.last_name, a.activity, a.item_id, a.detail, a.created_at
           FROM activity_log a LEFT JOIN users u ON u.id = a.user_id WHERE ${where} ORDER BY a.created_at DESC, a.id DESC LIMIT $${page + 1} OFFSET $${page + 2}`,
        [...params, limit, offset],
      ),
      this.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM activity_log a WHERE ${where}`, params),
    ]);
    return { count: count.rows[0]!.count, results: rows.rows.map(present) };
  }
}
