export const MAX_GROUP_TYPES = 5;

export type GroupColumns = [string, string, string, string, string];

/** The lowest index 0..4 not taken yet, or null once a project has five group types. */
export function nextGroupTypeIndex(taken: readonly number[]): number | null {
  for (let i = 0; i < MAX_GROUP_TYPES; i += 1) if (!taken.includes(i)) return i;
  return null;
}

/** The `{type: key}` pairs of `$groups` that link the event to a group: a key must be a string or a number. */
function groupLinks(groups: unknown): [string, string][] {
  if (groups === null || typeof groups !== 'object' || Array.isArray(groups)) return [];
  const links: [string, string][] = [];
  for (const [type, key] of Object.entries(groups as Record<string, unknown>)) {
    if (type !== '' && (typeof key === 'string' || typeof key === 'number')) links.push([type, String(key)]);
  }
  return links;
}

/** The group types an event's `$groups` links it through, in the order the event names them. */
export function groupTypesOf(groups: unknown): string[] {
  return groupLinks(groups).map(([type]) => type);
}

/** `$groups: {type: key}` as the event's `$group_0..4` columns; types without an index are left out. */
export function groupColumns(groups: unknown, mapping: ReadonlyMap<string, number>): GroupColumns {
  const columns: GroupColumns = ['', '', '', '', ''];
  for (const [type, key] of groupLinks(groups)) {
    const index = mapping.get(type);
    if (index !== undefined) columns[index] = key;
  }
  return columns;
}

export type GroupIdentify =
  | { ok: true; groupType: string; groupKey: string; properties: Record<string, unknown> }
  | { ok: false; warning: string };

/** `$groupidentify` needs a type and a key; `$group_set` holds the properties to set. */
export function readGroupIdentify(properties: Record<string, unknown>): GroupIdentify {
  const type = properties.$group_type;
  const key = properties.$group_key;
  if (typeof type !== 'string' || type === '') return { ok: false, warning: '$groupidentify without $group_type' };
  if ((typeof key !== 'string' && typeof key !== 'number') || key === '') return { ok: false, warning: '$groupidentify without $group_key' };
  const set = properties.$group_set;
  return { ok: true, groupType: type, groupKey: String(key), properties: set && typeof set === 'object' && !Array.isArray(set) ? (set as Record<string, unknown>) : {} };
}

/** Groups keep the newest `$group_set` values over the old ones. */
export function mergeGroupProperties(current: Record<string, unknown>, set: Record<string, unknown>): { properties: Record<string, unknown>; changed: boolean } {
  const properties = { ...current, ...set };
  return { properties, changed: JSON.stringify(properties) !== JSON.stringify(current) };
}
