import { withTransaction, type Pool } from '@tributary/postgres';

export interface GroupRecord {
  group_type_index: number;
  group_key: string;
  group_properties: Record<string, unknown>;
  created_at: Date;
}

export interface GroupTypeRecord {
  group_type: string;
  group_type_index: number;
  name_singular: string | null;
  name_plural: string | null;
}

/** A change of a type's names: a name left out stays as it is, null clears it. */
export interface GroupTypeNames {
  group_type_index: number;
  name_singular?: string | null;
  name_plural?: string | null;
}

/** Rolls back a naming that names a type the project does not have. */
class UnknownGroupType extends Error {}

/** Where a page of groups starts: after the last row of the previous page, in the list's order (newest first). */
export interface GroupCursor {
  created_at: string;
  group_key: string;
}

/** `%`, `_` and `\` stand for themselves in a search. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A project's groups and group types, read from Postgres where ingest keeps them (the source of
 * truth ClickHouse's copy is made from). Every read names the project.
 */
export class GroupStore {
  constructor(private readonly pool: Pool) {}

  /**
   * One page of a type's groups, newest first. `search`, as PostHog's: a group whose properties'
   * text contains it (any case), or whose key is it (any case).
   */
  async list(teamId: number, filter: { groupTypeIndex: number; search?: string; after?: GroupCursor; limit: number }): Promise<GroupRecord[]> {
    const params: unknown[] = [teamId, filter.groupTypeIndex, filter.limit];
    const where = ['team_id = $1', 'group_type_index = $2'];
    if (filter.search !== undefined) {
      params.push(likePattern(filter.search), filter.search);
      where.push(`(properties::text ILIKE $${params.length - 1} OR lower(group_key) = lower($${params.length}))`);
    }
    if (filter.after) {
      params.push(filter.after.created_at, filter.after.group_key);
      where.push(`(created_at, group_key) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    const { rows } = await this.pool.query<GroupRecord>(
      `SELECT group_type_index, group_key, properties AS group_properties, created_at FROM groups
        WHERE ${where.join(' AND ')} ORDER BY created_at DESC, group_key DESC LIMIT $3`,
      params,
    );
    return rows;
  }

  async find(teamId: number, groupTypeIndex: number, groupKey: string): Promise<GroupRecord | null> {
    const { rows } = await this.pool.query<GroupRecord>(
      'SELECT group_type_index, group_key, properties AS group_properties, created_at FROM groups WHERE team_id = $1 AND group_type_index = $2 AND group_key = $3',
      [teamId, groupTypeIndex, groupKey],
    );
    return rows[0] ?? null;
  }

  /** Each type's property names with how many of its groups have them, most common first. */
  async propertyDefinitions(teamId: number): Promise<{ group_type_index: number; name: string; count: number }[]> {
    const { rows } = await this.pool.query<{ group_type_index: number; name: string; count: number }>(
      `SELECT g.group_type_index, k.name, count(*)::int AS count FROM groups g, jsonb_object_keys(g.properties) AS k(name)
        WHERE g.team_id = $1 GROUP BY g.group_type_index, k.name ORDER BY g.group_type_index, count DESC, k.name`,
      [teamId],
    );
    return rows;
  }

  /** The 20 most common values of one property among a type's groups, as text; `value` keeps those containing it. */
  async propertyValues(teamId: number, groupTypeIndex: number, key: string, value: string | undefined): Promise<{ name: string; count: number }[]> {
    const { rows } = await this.pool.query<{ name: string; count: number }>(
      `SELECT properties ->> $3 AS name, count(*)::int AS count FROM groups
        WHERE team_id = $1 AND group_type_index = $2 AND properties ? $3 AND jsonb_typeof(properties -> $3) <> 'null'
          AND ($4::text IS NULL OR properties ->> $3 ILIKE $4)
        GROUP BY 1 ORDER BY count DESC, name LIMIT 20`,
      [teamId, groupTypeIndex, key, value === undefined ? null : likePattern(value)],
    );
    return rows;
  }

  async types(teamId: number): Promise<GroupTypeRecord[]> {
    const { rows } = await this.pool.query<GroupTypeRecord>(
      'SELECT group_type, group_type_index, name_singular, name_plural FROM group_type_mappings WHERE team_id = $1 ORDER BY group_type_index',
      [teamId],
    );
    return rows;
  }

  /** Names the given types, all or none: false when one of them is not a type of the project. */
  async nameTypes(teamId: number, changes: readonly GroupTypeNames[]): Promise<boolean> {
    try {
      await withTransaction(this.pool, async (client) => {
        for (const change of changes) {
          const result = await client.query(
            `UPDATE group_type_mappings SET
               name_singular = CASE WHEN $3 THEN $4 ELSE name_singular END,
               name_plural = CASE WHEN $5 THEN $6 ELSE name_plural END
             WHERE team_id = $1 AND group_type_index = $2`,
            [teamId, change.group_type_index, change.name_singular !== undefined, change.name_singular ?? null, change.name_plural !== undefined, change.name_plural ?? null],
          );
          if (result.rowCount !== 1) throw new UnknownGroupType();
        }
      });
      return true;
    } catch (error) {
      if (error instanceof UnknownGroupType) return false;
      throw error;
    }
  }
}
