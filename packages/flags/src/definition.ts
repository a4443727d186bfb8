import type { StoredPropertyFilter as PropertyFilter } from '@tributary/property-filters';

export type { PropertyFilter };

/** PostHog's flag definition shape, as the management API stores it. */
export interface ConditionGroup {
  properties?: PropertyFilter[];
  rollout_percentage?: number | null;
  variant?: string | null;
}

export interface Variant {
  key: string;
  name?: string;
  rollout_percentage: number;
}

export interface FlagFilters {
  aggregation_group_type_index?: number | null;
  groups?: ConditionGroup[];
  multivariate?: { variants: Variant[] } | null;
  payloads?: Record<string, unknown>;
  super_groups?: ConditionGroup[];
  holdout?: { id: number; exclusion_percentage: number } | null;
}

export interface FlagDefinition {
  id: number;
  key: string;
  name?: string;
  active: boolean;
  deleted?: boolean;
  ensure_experience_continuity?: boolean;
  version?: number;
  filters: FlagFilters;
}

/**
 * A cohort as flags see it. The members of a static cohort, and of a precomputed one (its
 * filters hold a behavioural condition, directly or through a cohort it nests, which only
 * events can decide), are listed by the caller; a dynamic cohort's are decided by its filters.
 */
export type CohortDefinition =
  | { id: number; kind: 'static' }
  | { id: number; kind: 'precomputed' }
  | { id: number; kind: 'dynamic'; filters: CohortFilterGroup };

export interface CohortFilterGroup {
  type?: 'AND' | 'OR';
  values?: (CohortFilterGroup | PropertyFilter)[];
}

