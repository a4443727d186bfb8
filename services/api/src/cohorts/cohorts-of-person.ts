import { cohortDefinitions, isCohortMember } from '@tributary/flags';
import type { CohortRecord, CohortStore } from './cohort-store.js';

/**
 * The cohorts a person is in now: listed in a static one or in a precomputed one's last
 * calculation, or matching a dynamic one's filters, decided by the flag engine so the answer is
 * the one decide gives.
 */
export async function cohortsOfPerson(
  cohorts: CohortStore,
  person: { id: number; team_id: number; properties: Record<string, unknown>; distinct_ids: string[] },
  now: Date,
): Promise<CohortRecord[]> {
  const rows = await cohorts.listWithListing(person.team_id, person.id);
  const definitions = cohortDefinitions(rows.map((r) => r.cohort));
  const context = {
    distinctId: person.distinct_ids[0] ?? '',
    personProperties: person.properties,
    groups: {},
    groupProperties: {},
    groupTypeMapping: {},
    cohorts: definitions,
    listedCohortIds: new Set(rows.filter((r) => r.listed).map((r) => r.cohort.id)),
    now,
  };
  return rows.map((r) => r.cohort).filter((cohort) => isCohortMember(cohort.id, context));
}
