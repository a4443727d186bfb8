import { loadFilterContext, namedCohortIds, type ActionDefinition, type FilterContext } from '@tributary/hogql';
import type { ActionStore } from '../actions/action-store.js';
import type { CohortStore } from './cohort-store.js';

/**
 * The cohorts a request's property filters name, wherever they stand in it (the query's, each
 * series', each step's): well-formed ids only, since they are looked up in Postgres; any other
 * value is refused when the filter is built.
 */
export const cohortIdsIn = (request: unknown): number[] => namedCohortIds(request);

export interface FilterStores {
  cohorts: Pick<CohortStore, 'definitions' | 'memberDistinctIds'>;
  actions: Pick<ActionStore, 'definitions'>;
}

/** What filters over the project's events need besides themselves: `now`, and the project's cohorts and actions they name, and those name in turn. */
export function filterContext(stores: FilterStores, teamId: number, ids: readonly number[], now: Date, actions: readonly ActionDefinition[] = []): Promise<FilterContext> {
  return loadFilterContext(
    {
      cohorts: (cohortIds) => stores.cohorts.definitions(teamId, cohortIds),
      memberDistinctIds: (cohortId) => stores.cohorts.memberDistinctIds(cohortId),
      actions: (actionIds) => stores.actions.definitions(teamId, actionIds),
    },
    ids,
    now,
    actions,
  );
}
