import { groupTypeIndexes } from '@tributary/control-plane';
import { nextGroupTypeIndex } from '@tributary/ingestion';
import type { Pool } from '@tributary/postgres';

export interface GroupRecord {
  group_type_index: number;
  group_key: string;
  properties: Record<string, unknown>;
  created_at: Date;
  version: number;
}

/**
 * Group type indexes per project (cached in memory: they never change once given) and group
 * rows. A type is given the next free index by an insert that the table's unique constraints
 * make safe across replicas; losing that race just means reading the winner's index.
 */
export class GroupStore {
  private readonly mappings = new Map<number, Map<string, number>>();

  constructor(private readonly pool: Pool) {}

  async mapping(teamId: number): Promise<Map<string, number>> {
    const cached = this.mappings.get(teamId);
    if (cached) return cached;
    const mapping = await groupTypeIndexes(this.pool, teamId);
    this.mappings.set(teamId, mapping);
    return mapping;
  }

  /** The index of a group type, giving it one if there is room; null for a sixth type. */
  async indexFor(teamId: number, groupType: string): Promise<number | null> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const mapping = await this.mapping(teamId);
      const known = mapping.get(groupType);
      if (known !== undefined) return known;
      const index = nextGroupTypeIndex([...mapping.values()]);
      if (index === null) return null;
      await this.pool.query('INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [teamId, groupType, index]);
      this.mappings.delete(teamId);
    }
    return (await this.mapping(teamId)).get(groupType) ?? null;
  }

  /**
   * Creates each group or merges its `$group_set` into it, bumping its version, in one statement.
   * Rows are written in key order so that two replicas never wait on each other in a cycle.
   */
  async upsertMany(entries: readonly { teamId: number; index: number; key: string; properties: Record<string, unknown>; createdAt: Date }[]): Promise<(GroupRecord & { team_id: number })[]> {
    if (entries.length === 0) return [];
    const sorted = [...entries].sort((a, b) => a.teamId - b.teamId || a.index - b.index || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const { rows } = await this.pool.query<GroupRecord & { team_id: number }>(
      `INSERT INTO groups (team_id, group_type_index, group_key, properties, created_at, version)
       SELECT g.team_id, g.group_type_index, g.group_key, g.properties::jsonb, g.created_at, 0
         FROM unnest($1::int[], $2::smallint[], $3::text[], $4::text[], $5::timestamptz[]) WITH ORDINALITY AS g (team_id, group_type_index, group_key, properties, created_at, n)
        ORDER BY g.n
       ON CONFLICT (team_id, group_type_index, group_key)
       DO UPDATE SET properties = groups.properties || EXCLUDED.properties, version = groups.version + 1
       RETURNING team_id, group_type_index, group_key, properties, created_at, version`,
      [sorted.map((e) => e.teamId), sorted.map((e) => e.index), sorted.map((e) => e.key), sorted.map((e) => JSON.stringify(e.properties)), sorted.map((e) => e.createdAt)],
    );
    return rows;
  }
}
