import type { Pool } from '@tributary/postgres';

/**
 * Listing, reading and deleting a project's rows keyed by uuid, as surveys and early access
 * features are kept. `select` reads the table as `alias`, with whatever joins its rows need.
 */
export class UuidRowStore<Row> {
  constructor(
    protected readonly pool: Pool,
    private readonly table: { name: string; alias: string; select: string },
  ) {}

  async list(teamId: number, limit: number, offset: number): Promise<{ count: number; results: Row[] }> {
    const { name, alias, select } = this.table;
    const [{ rows }, count] = await Promise.all([
      this.pool.query<Row & object>(`${select} WHERE ${alias}.team_id = $1 ORDER BY ${alias}.created_at DESC, ${alias}.id LIMIT $2 OFFSET $3`, [teamId, limit, offset]),
      this.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${name} WHERE team_id = $1`, [teamId]),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async get(teamId: number, id: string): Promise<Row | null> {
    const { rows } = await this.pool.query<Row & object>(`${this.table.select} WHERE ${this.table.alias}.team_id = $1 AND ${this.table.alias}.id = $2`, [teamId, id]);
    return rows[0] ?? null;
  }

  async delete(teamId: number, id: string): Promise<boolean> {
    const result = await this.pool.query(`DELETE FROM ${this.table.name} WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return result.rowCount === 1;
  }
}
