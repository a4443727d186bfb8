import type { Pool, PoolClient } from '@tributary/postgres';

/**
 * A project's group types by name, with the index (0 to 4) each was given. The one reader of
 * `group_type_mappings`: ingest assigns indexes, decide and the API translate between the two.
 */
export async function groupTypeIndexes(db: Pool | PoolClient, teamId: number): Promise<Map<string, number>> {
  const { rows } = await db.query<{ group_type: string; group_type_index: number }>('SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1', [teamId]);
  return new Map(rows.map((r) => [r.group_type, r.group_type_index]));
}
