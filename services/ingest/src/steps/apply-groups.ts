import { formatDateTime } from '@tributary/clickhouse';
import { groupTypesOf, mergeGroupProperties } from '@tributary/ingestion';
import type { RowBuffer } from '../clickhouse-rows.js';
import type { Prepared } from '../event-memory.js';
import type { GroupStore } from '../groups/group-store.js';

/** Each project's group types, by name, with their index. */
export type ChunkGroupTypes = Map<number, Map<string, number>>;

/**
 * The groups step: the chunk's `$groupidentify` events applied, then each project's group types
 * read for the events' group columns.
 */
export function createApplyGroupsStep(groups: GroupStore) {
  /**
   * `$groupidentify` events of the chunk: each group's `$group_set`s merged in event order, then
   * every group written in one statement. Problems become warnings on the event.
   */
  const identify = async (prepared: readonly Prepared[], rows: RowBuffer): Promise<void> => {
    const merged = new Map<string, { teamId: number; index: number; key: string; properties: Record<string, unknown>; createdAt: Date }>();
    for (const p of prepared) {
      const identify = p.groupIdentify;
      if (!identify) continue;
      if (!identify.ok) {
        p.warnings = [...p.warnings, { type: 'invalid_groupidentify', details: { reason: identify.warning } }];
        continue;
      }
      const index = await groups.indexFor(p.teamId, identify.groupType);
      if (index === null) {
        p.warnings = [...p.warnings, { type: 'group_type_limit_reached', details: { groupType: identify.groupType } }];
        continue;
      }
      const k = `${p.teamId}\u0000${index}\u0000${identify.groupKey}`;
      const earlier = merged.get(k);
      merged.set(k, { teamId: p.teamId, index, key: identify.groupKey, properties: mergeGroupProperties(earlier?.properties ?? {}, identify.properties).properties, createdAt: earlier?.createdAt ?? p.timestamp });
    }
    for (const group of await groups.upsertMany([...merged.values()])) {
      rows.groups.add({
        group_type_index: group.group_type_index,
        group_key: group.group_key,
        created_at: formatDateTime(group.created_at),
        team_id: group.team_id,
        group_properties: JSON.stringify(group.properties),
        version: group.version,
      });
    }
  };

  /**
   * Each project's group types once the chunk's `$groups` are read: a type new to its project is
   * given the next free index on first use, as PostHog does, so an event can name a group before
   * any `$groupidentify` of its type. A project's mapping is looked up once, not once per event.
   */
  const types = async (prepared: readonly Prepared[]): Promise<ChunkGroupTypes> => {
    const groupTypes: ChunkGroupTypes = new Map();
    for (const p of prepared) {
      let mapping = groupTypes.get(p.teamId) ?? (await groups.mapping(p.teamId));
      for (const type of groupTypesOf(p.groups)) {
        // A sixth type gets no index; its link is dropped with a warning when the row is written.
        if (!mapping.has(type) && (await groups.indexFor(p.teamId, type)) !== null) mapping = await groups.mapping(p.teamId);
      }
      groupTypes.set(p.teamId, mapping);
    }
    return groupTypes;
  };

  return async (prepared: readonly Prepared[], rows: RowBuffer): Promise<ChunkGroupTypes> => {
    await identify(prepared, rows);
    return types(prepared);
  };
}
