import { behaviouralActionIds, cohortClosure } from '@tributary/flags';
import { cohortPersonIdsQuery, type CohortDefinition, type CohortGroup } from '@tributary/hogql';
import type { CohortCalculationStore } from './cohort-calculation-store.js';
import type { CohortMembersStatement } from './cohort-members-reader.js';

/**
 * A cohort's members statement as the HogQL layer builds it (cohortPersonIdsQuery), given what
 * it reads of the project in Postgres: the cohort and the cohorts it nests (a static one's
 * members by distinct id), and the actions its behavioural conditions name. Everything is looked
 * up in the calculation's project, so a name of another project's cohort or action names none.
 */
export function cohortStatement(store: Pick<CohortCalculationStore, 'memberDistinctIds' | 'actions'>): CohortMembersStatement {
  return async (calculation, now) => {
    const closure = cohortClosure(calculation.cohortId, calculation.cohorts);
    const cohorts = new Map<number, CohortDefinition>();
    for (const cohort of closure) {
      cohorts.set(
        cohort.id,
        cohort.is_static
          ? { id: cohort.id, static: true, distinctIds: await store.memberDistinctIds(calculation.teamId, cohort.id) }
          : { id: cohort.id, static: false, filters: (cohort.filters as { properties?: CohortGroup }).properties ?? {} },
      );
    }
    const actions = await store.actions(calculation.teamId, behaviouralActionIds(closure));
    return cohortPersonIdsQuery(calculation.cohortId, { now, cohorts, actions: new Map(actions.map((action) => [action.id, action])) });
  };
}
