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
    const { rows } = await this.pool.query<{ group_type: string; group_type_index: number }>(
      'SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1',
      [teamId],
    );
    const mapping = new Map(rows.map((r) => [r.group_type, r.group_type_index]));
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

  /** Creates the group or merges `$group_set` into it, bumping its version. */
  async upsert(teamId: number, index: number, key: string, properties: Record<string, unknown>, createdAt: Date): Promise<GroupRecord> {
    const { rows } = await this.pool.query<GroupRecord>(
      `INSERT INTO groups (team_id, group_type_index, group_key, properties, created_at, version) VALUES ($1, $2, $3, $4, $5, 0)
       ON CONFLICT (team_id, group_type_index, group_key)
       DO UPDATE SET properties = groups.properties || EXCLUDED.properties, version = groups.version + 1
       RETURNING group_type_index, group_key, properties, created_at, version`,
      [teamId, index, key, properties, createdAt],
    );
    return rows[0]!;
  }
}
