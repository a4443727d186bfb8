import type { CohortDefinition, CohortGroup, FilterContext } from '@tributary/hogql';
import { isCohortId } from '@tributary/property-filters';
import { idsInRequest } from '../query/ids-in-request.js';
import type { CohortStore } from './cohort-store.js';

/**
 * The cohorts a request's property filters name, wherever they stand in it (the query's, each
 * series', each step's): well-formed ids only, since they are looked up in Postgres; any other
 * value is refused when the filter is built.
 */
export function cohortIdsIn(request: unknown): number[] {
  return idsInRequest(request, (node) => (node.type === 'cohort' && typeof node.key === 'string' && isCohortId(node.value) ? Number(node.value) : undefined));
}

/** What filters over the project's events need besides themselves: `now`, and the project's cohorts they name. */
export async function filterContext(cohorts: Pick<CohortStore, 'definitions' | 'memberDistinctIds'>, teamId: number, ids: readonly number[], now: Date): Promise<FilterContext> {
  const definitions = new Map<number, CohortDefinition>();
  if (ids.length === 0) return { now, cohorts: definitions };
  for (const cohort of await cohorts.definitions(teamId, ids)) {
    definitions.set(
      cohort.id,
      cohort.is_static
        ? { id: cohort.id, static: true, distinctIds: await cohorts.memberDistinctIds(cohort.id) }
        : { id: cohort.id, static: false, filters: (cohort.filters as { properties?: CohortGroup }).properties ?? {} },
    );
  }
  return { now, cohorts: definitions };
}
