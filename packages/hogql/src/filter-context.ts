import { actionIdOf, isCohortId } from '@tributary/property-filters';
import type { ActionDefinition } from './action-definition.js';
import { MAX_COHORT_NESTING, type CohortDefinition, type CohortGroup, type FilterContext } from './property-filter-expr.js';

/** A cohort as its store keeps it: `filters.properties` holds a dynamic cohort's groups. */
export interface StoredCohort {
  id: number;
  is_static: boolean;
  filters: unknown;
}

/** Lookups in one project's stores: whatever they are asked for, they find only that project's. */
export interface FilterLookups {
  cohorts(ids: readonly number[]): Promise<readonly StoredCohort[]>;
  /** A static cohort's members' distinct ids. */
  memberDistinctIds(cohortId: number): Promise<readonly string[]>;
  actions(ids: readonly number[]): Promise<readonly ActionDefinition[]>;
}

/** The ids `pick` finds anywhere in `value` (a request, a cohort's filters, actions' steps), each once. */
export function idsIn(value: unknown, pick: (node: Record<string, unknown>) => number | null): number[] {
  const ids = new Set<number>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (v === null || typeof v !== 'object') return;
    const node = v as Record<string, unknown>;
    const id = pick(node);
    if (id !== null) ids.add(id);
    Object.values(node).forEach(visit);
  };
  visit(value);
  return [...ids];
}

/** The cohorts filters, a cohort's conditions or actions' steps name (`type: "cohort"`). */
export const namedCohortIds = (value: unknown): number[] => idsIn(value, (node) => (node.type === 'cohort' && typeof node.key === 'string' && isCohortId(node.value) ? Number(node.value) : null));
/** The actions a cohort's behavioural conditions name (`event_type: "actions"`). */
export const namedActionIds = (value: unknown): number[] => idsIn(value, (node) => (node.type === 'behavioral' && node.event_type === 'actions' ? actionIdOf(node.key) : null));

/**
 * Rounds of lookups: each loads what the previous round's cohorts and actions name. A cohort nests
 * at most MAX_COHORT_NESTING deep, each level perhaps through an action's step, so what a chain
 * this long has not reached is deeper than the builder takes, and is refused there.
 */
const ROUNDS = 2 * MAX_COHORT_NESTING + 2;

/**
 * What filters over a project's events need besides themselves: `now`, the cohorts `ids`, and
 * everything those name in turn (cohorts within cohorts, the actions of behavioural conditions,
 * the cohorts of those actions' steps), each found through `lookups`, which look in the project
 * alone; `actions` are those the caller already loaded.
 */
export async function loadFilterContext(lookups: FilterLookups, ids: readonly number[], now: Date, actions: readonly ActionDefinition[] = []): Promise<FilterContext> {
  const cohorts = new Map<number, CohortDefinition>();
  const actionsById = new Map(actions.map((a) => [a.id, a]));
  let cohortIds = [...ids, ...namedCohortIds(actions.map((a) => a.steps))];
  let actionIds: number[] = [];
  for (let round = 0; round < ROUNDS && (cohortIds.length > 0 || actionIds.length > 0); round++) {
    const newCohorts = [...new Set(cohortIds)].filter((id) => !cohorts.has(id));
    const newActions = [...new Set(actionIds)].filter((id) => !actionsById.has(id));
    const [cohortRows, actionRows] = await Promise.all([newCohorts.length ? lookups.cohorts(newCohorts) : [], newActions.length ? lookups.actions(newActions) : []]);
    cohortIds = [];
    actionIds = [];
    for (const cohort of cohortRows) {
      if (cohort.is_static) {
        cohorts.set(cohort.id, { id: cohort.id, static: true, distinctIds: await lookups.memberDistinctIds(cohort.id) });
        continue;
      }
      const filters = (cohort.filters as { properties?: CohortGroup } | null)?.properties ?? {};
      cohorts.set(cohort.id, { id: cohort.id, static: false, filters });
      cohortIds.push(...namedCohortIds(filters));
      actionIds.push(...namedActionIds(filters));
    }
    for (const action of actionRows) {
      actionsById.set(action.id, action);
      cohortIds.push(...namedCohortIds(action.steps));
    }
  }
  return { now, cohorts, actions: actionsById };
}
