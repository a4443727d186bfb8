import { matchProperty } from '@tributary/property-filters';
import type { CohortFilterGroup, PropertyFilter } from './definition.js';
import type { EvaluationContext } from './evaluation-context.js';

const isFilterGroup = (value: CohortFilterGroup | PropertyFilter): value is CohortFilterGroup => !('key' in value);

/** Whether a cohort filter holds: membership of cohort `id`, inverted for `not_in`. */
export function matchCohort(id: number, notIn: boolean, context: EvaluationContext): boolean {
  const cohort = context.cohorts?.get(id);
  let member = false;
  if (cohort?.kind === 'static' || cohort?.kind === 'precomputed') member = context.listedCohortIds?.has(id) ?? false;
  else if (cohort?.kind === 'dynamic') member = matchCohortGroup(cohort.filters, context);
  return notIn ? !member : member;
}

/** Whether the context's person belongs to a cohort: listed in a static or precomputed one, or matching a dynamic one's filters now. */
export function isCohortMember(cohortId: number, context: EvaluationContext): boolean {
  return matchCohort(cohortId, false, context);
}

// A dynamic cohort's filters come with the request's context, not with the flag, so they are
// matched as they are rather than planned.
function matchCohortGroup(group: CohortFilterGroup, context: EvaluationContext): boolean {
  const values = group.values ?? [];
  const results = values.map((value) => (isFilterGroup(value) ? matchCohortGroup(value, context) : matchFilter(value, context)));
  return group.type === 'OR' ? results.some(Boolean) : results.every(Boolean);
}

function matchFilter(filter: PropertyFilter, context: EvaluationContext): boolean {
  const matched = filter.type === 'cohort' ? matchCohort(Number(filter.value), filter.operator === 'not_in', context) : matchProperty(filter, context.personProperties, context.now);
  return filter.negation ? !matched : matched;
}
