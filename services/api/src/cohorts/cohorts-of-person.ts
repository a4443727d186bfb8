import { isCohortMember, type CohortDefinition, type CohortFilterGroup } from '@tributary/flags';
import type { CohortRecord, CohortStore } from './cohort-store.js';

/**
 * The cohorts a person is in now: listed in a static one, or matching a dynamic one's filters,
 * decided by the flag engine so the answer is the one decide gives.
 */
export async function cohortsOfPerson(
  cohorts: CohortStore,
  person: { id: number; team_id: number; properties: Record<string, unknown>; distinct_ids: string[] },
  now: Date,
): Promise<CohortRecord[]> {
  const rows = await cohorts.listWithListing(person.team_id, person.id);
  const definitions = new Map<number, CohortDefinition>(
    rows.map(({ cohort }) => [
      cohort.id,
      cohort.is_static ? { id: cohort.id, kind: 'static' } : { id: cohort.id, kind: 'dynamic', filters: (cohort.filters as { properties?: CohortFilterGroup }).properties ?? {} },
    ]),
  );
  const context = {
    distinctId: person.distinct_ids[0] ?? '',
    personProperties: person.properties,
    groups: {},
    groupProperties: {},
    groupTypeMapping: {},
    cohorts: definitions,
    staticCohortIds: new Set(rows.filter((r) => r.listed).map((r) => r.cohort.id)),
    now,
  };
  return rows.map((r) => r.cohort).filter((cohort) => isCohortMember(cohort.id, context));
}
