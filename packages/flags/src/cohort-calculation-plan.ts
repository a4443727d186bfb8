import { nestedCohortIds, precomputedCohortIds, type StoredCohort } from './cohort-definitions.js';

/** A live cohort with its calculation's state, as the worker's scheduler reads it. */
export interface CalculationState extends StoredCohort {
  team_id: number;
  /** The version decide reads; null before a first calculation finished. */
  version: number | null;
  /** When the members `version` lists were read. */
  last_calculation: Date | null;
  /** Moves with every edit of the cohort. */
  updated_at: Date;
  last_error_at: Date | null;
}

export interface CalculationPolicy {
  now: Date;
  /** How old a calculation may get, and how long a failed one waits before it is tried again. */
  intervalMs: number;
  /** Cohorts at most, per look: the rest wait for the next. */
  limit: number;
}

/**
 * Which precomputed cohorts to calculate now, never calculated first, then the longest ago (as
 * PostHog orders them): one with no calculation, one edited since its last, one that nests a
 * cohort edited since (its members follow that cohort's filters too), or one older than the
 * interval; never one that failed within the interval, so a cohort that cannot be calculated
 * costs ClickHouse one try per interval rather than one per look. `cohorts` are every live
 * dynamic cohort of the projects concerned; each project's are classified on their own.
 */
export function cohortsToCalculate(cohorts: readonly CalculationState[], policy: CalculationPolicy): CalculationState[] {
  const byTeam = new Map<number, CalculationState[]>();
  for (const cohort of cohorts) {
    const team = byTeam.get(cohort.team_id);
    if (team) team.push(cohort);
    else byTeam.set(cohort.team_id, [cohort]);
  }
  const now = policy.now.getTime();
  const due: CalculationState[] = [];
  for (const team of byTeam.values()) {
    const precomputed = precomputedCohortIds(team);
    // Over-approximated, so it costs one pass: an edit of any nested cohort of the project makes every cohort that nests one due.
    const byId = new Map(team.map((cohort) => [cohort.id, cohort]));
    const nests = new Map(team.map((cohort) => [cohort.id, nestedCohortIds(cohort)]));
    let nestedEdited = 0;
    for (const ids of nests.values()) for (const id of ids) nestedEdited = Math.max(nestedEdited, byId.get(id)?.updated_at.getTime() ?? 0);
    for (const cohort of team) {
      if (!precomputed.has(cohort.id)) continue;
      if (cohort.last_error_at !== null && now - cohort.last_error_at.getTime() < policy.intervalMs) continue;
      const last = cohort.last_calculation?.getTime();
      const stale =
        last === undefined ||
        cohort.version === null ||
        cohort.updated_at.getTime() > last ||
        (nests.get(cohort.id)!.length > 0 && nestedEdited > last) ||
        now - last >= policy.intervalMs;
      if (stale) due.push(cohort);
    }
  }
  const order = (cohort: CalculationState) => (cohort.version === null ? -Infinity : (cohort.last_calculation?.getTime() ?? -Infinity));
  return due.sort((a, b) => order(a) - order(b) || a.id - b.id).slice(0, policy.limit);
}
