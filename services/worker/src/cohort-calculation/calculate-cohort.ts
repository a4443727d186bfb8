import { precomputedCohortIds } from '@tributary/flags';
import type { Logger } from '@tributary/logger';
import type { Calculation, CohortCalculationStore } from './cohort-calculation-store.js';

export interface CohortCalculationDeps {
  store: Pick<CohortCalculationStore, 'teamOf' | 'cohortsOf' | 'begin' | 'addMembers' | 'finish' | 'fail'>;
  /** The person uuids of the calculation's cohort, read from ClickHouse a chunk at a time (see cohortMembersReader). */
  members: (calculation: Calculation) => AsyncIterable<string[]>;
  logger: Logger;
  /** Person uuids one insert takes at most: a huge cohort is written in many, never held whole. */
  batchSize: number;
}

/** `source`'s items in arrays of at most `size`, as they arrive. */
export async function* inBatches<T>(source: AsyncIterable<readonly T[]>, size: number): AsyncIterable<T[]> {
  let batch: T[] = [];
  for await (const chunk of source) {
    for (const item of chunk) {
      batch.push(item);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

export type CalculationOutcome = 'calculated' | 'superseded' | 'failed' | 'skipped';

/**
 * Calculates one behavioural cohort: its members read from ClickHouse under its project's guard,
 * written to Postgres batch by batch under a new version, and made current at once. A failure is
 * recorded on the cohort (and logged), never thrown: one cohort that cannot be calculated does
 * not hold up the others, and the scheduler tries it again an interval later. A cohort that is
 * gone, static, or no longer behavioural is skipped.
 */
export async function calculateCohort(deps: CohortCalculationDeps, cohortId: number): Promise<CalculationOutcome> {
  const teamId = await deps.store.teamOf(cohortId);
  if (teamId === null) return 'skipped';
  const cohorts = await deps.store.cohortsOf(teamId);
  if (!precomputedCohortIds(cohorts).has(cohortId)) return 'skipped';
  const calculation = await deps.store.begin(cohortId, teamId, cohorts);
  if (!calculation) return 'skipped';
  try {
    let count = 0;
    for await (const batch of inBatches(deps.members(calculation), deps.batchSize)) count += await deps.store.addMembers(calculation, batch);
    const current = await deps.store.finish(calculation, count);
    deps.logger.info({ cohortId, teamId, version: calculation.version, count, current }, 'cohort calculated');
    return current ? 'calculated' : 'superseded';
  } catch (error) {
    deps.logger.warn({ err: error, cohortId, teamId }, 'cohort calculation failed; recorded on the cohort');
    await deps.store.fail(calculation);
    return 'failed';
  }
}
