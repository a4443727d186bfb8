import type { CohortDefinition } from './definition.js';

export interface EvaluationContext {
  distinctId: string;
  personProperties: Record<string, unknown>;
  /** Group type name -> group key, from the request. */
  groups: Record<string, string>;
  /** Group type name -> properties of the request's group of that type. */
  groupProperties: Record<string, Record<string, unknown>>;
  /** Group type index -> group type name. */
  groupTypeMapping: Record<number, string>;
  cohorts?: ReadonlyMap<number, CohortDefinition>;
  /** Static and precomputed cohorts the person is listed in. */
  listedCohortIds?: ReadonlySet<number>;
  /** Flag key -> the distinct id to hash instead (experience continuity). */
  hashKeyOverrides?: Record<string, string>;
  now: Date;
}
