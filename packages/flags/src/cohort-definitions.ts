import type { CohortDefinition, CohortFilterGroup } from './definition.js';

/** A project's cohort as stored: what decide, the api and the worker each read from Postgres. */
export interface StoredCohort {
  id: number;
  is_static: boolean;
  filters: { properties?: CohortFilterGroup } | Record<string, never>;
}

/** Every condition of a filter group, however deeply its groups nest, with a stack rather than recursion. */
function conditionsOf(group: CohortFilterGroup | undefined): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const pending: unknown[] = [group];
  while (pending.length > 0) {
    const value = pending.pop();
    if (value === null || typeof value !== 'object') continue;
    const values = (value as { values?: unknown }).values;
    if (Array.isArray(values)) for (const nested of values) pending.push(nested);
    else out.push(value as Record<string, unknown>);
  }
  return out;
}

const conditionsOfCohort = (cohort: StoredCohort) => (cohort.is_static ? [] : conditionsOf((cohort.filters as { properties?: CohortFilterGroup }).properties));
const isBehavioural = (condition: Record<string, unknown>) => condition.type === 'behavioral';

/** The ids of the cohorts a dynamic cohort's filters name (`type: 'cohort'`), at any depth. */
export function nestedCohortIds(cohort: StoredCohort): number[] {
  const ids: number[] = [];
  for (const condition of conditionsOfCohort(cohort)) {
    const id = Number(condition.value);
    if (condition.type === 'cohort' && Number.isSafeInteger(id)) ids.push(id);
  }
  return ids;
}

/**
 * The project's cohorts whose members only events can decide: a dynamic cohort with a
 * behavioural condition, or one that nests such a cohort at any depth (cycles included). Found
 * from the behavioural ones outward along "is nested by", so a long chain of cohorts costs one
 * visit each. `cohorts` are one project's: a nested id that is not among them names no cohort.
 */
export function precomputedCohortIds(cohorts: readonly StoredCohort[]): Set<number> {
  const nestedBy = new Map<number, number[]>();
  const found = new Set<number>();
  for (const cohort of cohorts) {
    if (conditionsOfCohort(cohort).some(isBehavioural)) found.add(cohort.id);
    for (const nested of nestedCohortIds(cohort)) {
      const outers = nestedBy.get(nested);
      if (outers) outers.push(cohort.id);
      else nestedBy.set(nested, [cohort.id]);
    }
  }
  const pending = [...found];
  while (pending.length > 0) {
    for (const outer of nestedBy.get(pending.pop()!) ?? []) {
      if (found.has(outer)) continue;
      found.add(outer);
      pending.push(outer);
    }
  }
  return found;
}

/** A project's cohorts as flag evaluation reads them (see CohortDefinition). */
export function cohortDefinitions(cohorts: readonly StoredCohort[]): Map<number, CohortDefinition> {
  const precomputed = precomputedCohortIds(cohorts);
  const definitions = new Map<number, CohortDefinition>();
  for (const cohort of cohorts) {
    const filters = (cohort.filters as { properties?: CohortFilterGroup }).properties ?? {};
    if (cohort.is_static) definitions.set(cohort.id, { id: cohort.id, kind: 'static' });
    else if (precomputed.has(cohort.id)) definitions.set(cohort.id, { id: cohort.id, kind: 'precomputed' });
    else definitions.set(cohort.id, { id: cohort.id, kind: 'dynamic', filters });
  }
  return definitions;
}
