import type { CohortDefinition, FlagDefinition } from './definition.js';

/**
 * What stored data a project's flags can read beyond what a request carries, so decide reads
 * only that: a store round trip per request for data no flag looks at is the cost of decide.
 */
export interface StoredDataNeeds {
  /** Some live flag has a cohort filter (which may nest others) and the project has a cohort whose members are listed (static or precomputed). */
  listedCohorts: boolean;
  /** Group type name -> the group property keys live flags aggregated by that type compare. */
  groupKeys: Map<string, Set<string>>;
  /**
   * Some live flag, or some cohort, compares a date (`is_date_*`), which may be relative to the
   * time of the request ("-7d"): an answer can then change with time alone.
   */
  clock: boolean;
}

/** Whether a definition holds a filter with a date operator, however deeply nested. */
function comparesDates(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(comparesDates);
  if (value === null || typeof value !== 'object') return false;
  const operator = (value as { operator?: unknown }).operator;
  if (typeof operator === 'string' && operator.startsWith('is_date_')) return true;
  return Object.values(value).some(comparesDates);
}

const live = (flag: FlagDefinition) => flag.active && !flag.deleted;

/** Every property filter of a flag's condition groups and super groups. */
const filtersOf = (flag: FlagDefinition) => [...(flag.filters.groups ?? []), ...(flag.filters.super_groups ?? [])].flatMap((group) => group.properties ?? []);

export function storedDataNeeds(flags: readonly FlagDefinition[], cohorts: ReadonlyMap<number, CohortDefinition>, groupTypeMapping: Record<number, string>): StoredDataNeeds {
  const hasListed = [...cohorts.values()].some((cohort) => cohort.kind !== 'dynamic');
  const listedCohorts = hasListed && flags.some((flag) => live(flag) && filtersOf(flag).some((filter) => filter.type === 'cohort'));

  const groupKeys = new Map<string, Set<string>>();
  for (const flag of flags) {
    const index = flag.filters.aggregation_group_type_index;
    const type = index === undefined || index === null ? undefined : groupTypeMapping[index];
    if (!live(flag) || type === undefined) continue;
    const keys = groupKeys.get(type) ?? new Set<string>();
    // Condition groups of a group flag compare the group's properties; cohorts are about persons.
    for (const group of flag.filters.groups ?? []) for (const filter of group.properties ?? []) if (filter.type !== 'cohort') keys.add(filter.key);
    groupKeys.set(type, keys);
  }
  const clock = flags.some((flag) => live(flag) && comparesDates(flag.filters)) || [...cohorts.values()].some(comparesDates);
  return { listedCohorts, groupKeys, clock };
}

/**
 * The request's groups whose stored properties could change an answer: a live flag reads a key
 * of that type the request did not send. Sent properties win over stored ones, so when the
 * request carries every key the flags compare, the stored ones cannot matter.
 */
export function groupsToFetch(needs: StoredDataNeeds, groups: Record<string, string>, sent: Record<string, Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [type, key] of Object.entries(groups)) {
    const keys = needs.groupKeys.get(type);
    const given = sent[type] ?? {};
    if (keys && [...keys].some((k) => !Object.prototype.hasOwnProperty.call(given, k))) out[type] = key;
  }
  return out;
}

/**
 * Whether a flag reads a person property the request does not carry, or a cohort: without the
 * stored person it cannot be answered truthfully. A carried key is the request's own: `in`
 * would also find what every object inherits, and answer for `toString` as if it were given.
 */
export function needsStoredPerson(flag: FlagDefinition, provided: Record<string, unknown>): boolean {
  return filtersOf(flag).some((p) => p.type === 'cohort' || ((p.type ?? 'person') === 'person' && !Object.hasOwn(provided, p.key)));
}
