import { cohortPersonIdsQuery, loadFilterContext } from '@tributary/hogql';
import type { CohortCalculationStore } from './cohort-calculation-store.js';
import type { CohortMembersStatement } from './cohort-members-reader.js';

/**
 * A cohort's members statement as the HogQL layer builds it (cohortPersonIdsQuery), with what it
 * names in turn (cohorts it nests, a static one's members, actions and their steps' cohorts)
 * looked up in the calculation's project alone: a name of another project's cohort or action
 * names none, and the statement is refused.
 */
export function cohortStatement(store: Pick<CohortCalculationStore, 'memberDistinctIds' | 'actions'>): CohortMembersStatement {
  return async (calculation, now) => {
    const { teamId, cohorts } = calculation;
    const context = await loadFilterContext(
      {
        cohorts: async (ids) => cohorts.filter((cohort) => ids.includes(cohort.id)),
        memberDistinctIds: (cohortId) => store.memberDistinctIds(teamId, cohortId),
        actions: (ids) => store.actions(teamId, ids),
      },
      [calculation.cohortId],
      now,
    );
    return cohortPersonIdsQuery(calculation.cohortId, context);
  };
}
