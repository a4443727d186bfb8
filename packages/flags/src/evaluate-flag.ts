import type { CohortDefinition, CohortFilterGroup, ConditionGroup, FlagDefinition, PropertyFilter } from './definition.js';
import { hashFor, holdoutHash } from './hash.js';
import { matchProperty } from '@tributary/property-filters';

export type ReasonCode =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'flag_disabled'
  | 'super_condition_value'
  | 'holdout_condition_value';

export interface FlagResult {
  key: string;
  enabled: boolean;
  variant: string | null;
  payload: unknown;
  reason: { code: ReasonCode; condition_index: number | null; description: string };
}

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
  /** Static cohorts the person belongs to. */
  staticCohortIds?: ReadonlySet<number>;
  /** Flag key -> the distinct id to hash instead (experience continuity). */
  hashKeyOverrides?: Record<string, string>;
  now: Date;
}

const isFilterGroup = (value: CohortFilterGroup | PropertyFilter): value is CohortFilterGroup => !('key' in value);

function matchCohort(filter: PropertyFilter, context: EvaluationContext): boolean {
  const id = Number(filter.value);
  const cohort = context.cohorts?.get(id);
  let member = false;
  if (cohort?.kind === 'static') member = context.staticCohortIds?.has(id) ?? false;
  else if (cohort?.kind === 'dynamic') member = matchCohortGroup(cohort.filters, context);
  return filter.operator === 'not_in' ? !member : member;
}

/** Whether the context's person belongs to a cohort: listed in a static one, or matching a dynamic one's filters now. */
export function isCohortMember(cohortId: number, context: EvaluationContext): boolean {
  return matchCohort({ key: 'id', type: 'cohort', value: cohortId }, context);
}

function matchCohortGroup(group: CohortFilterGroup, context: EvaluationContext): boolean {
  const values = group.values ?? [];
  const results = values.map((value) => (isFilterGroup(value) ? matchCohortGroup(value, context) : matchFilter(value, context.personProperties, context)));
  return group.type === 'OR' ? results.some(Boolean) : results.every(Boolean);
}

function matchFilter(filter: PropertyFilter, properties: Record<string, unknown>, context: EvaluationContext): boolean {
  const matched = filter.type === 'cohort' ? matchCohort(filter, context) : matchProperty(filter, properties, context.now);
  return filter.negation ? !matched : matched;
}

function propertiesFor(flag: FlagDefinition, context: EvaluationContext): Record<string, unknown> | null {
  const index = flag.filters.aggregation_group_type_index;
  if (index === undefined || index === null) return context.personProperties;
  const type = context.groupTypeMapping[index];
  return type === undefined ? null : (context.groupProperties[type] ?? {});
}

/** The id a flag buckets on: the distinct id (or its continuity override), or the group's key. */
function bucketId(flag: FlagDefinition, context: EvaluationContext): string | null {
  const index = flag.filters.aggregation_group_type_index;
  if (index === undefined || index === null) return context.hashKeyOverrides?.[flag.key] ?? context.distinctId;
  const type = context.groupTypeMapping[index];
  return type === undefined ? null : (context.groups[type] ?? null);
}

/** The id a flag buckets on, hashed at most once however many condition groups ask: they all bucket the same id. */
interface Bucket {
  flagKey: string;
  id: string;
  hash?: number;
}

const bucketHash = (bucket: Bucket) => (bucket.hash ??= hashFor(bucket.flagKey, bucket.id));

function conditionMatch(group: ConditionGroup, bucket: Bucket, properties: Record<string, unknown>, context: EvaluationContext): 'match' | 'no_match' | 'out_of_rollout' {
  for (const filter of group.properties ?? []) {
    if (!matchFilter(filter, properties, context)) return 'no_match';
  }
  const rollout = group.rollout_percentage;
  // A bucket is at most 1 (16^15 - 1 over itself), so a full rollout needs no hash.
  if (rollout !== undefined && rollout !== null && rollout < 100 && bucketHash(bucket) > rollout / 100) return 'out_of_rollout';
  return 'match';
}

function pickVariant(flag: FlagDefinition, id: string, override: string | null | undefined): string | null {
  const variants = flag.filters.multivariate?.variants ?? [];
  if (variants.length === 0) return null;
  if (override && variants.some((v) => v.key === override)) return override;
  const h = hashFor(flag.key, id, 'variant');
  let sum = 0;
  for (const variant of variants) {
    sum += variant.rollout_percentage / 100;
    if (h < sum) return variant.key;
  }
  return null;
}

function payloadFor(flag: FlagDefinition, enabled: boolean, variant: string | null): unknown {
  if (!enabled) return null;
  return flag.filters.payloads?.[variant ?? 'true'] ?? null;
}

function result(flag: FlagDefinition, enabled: boolean, variant: string | null, code: ReasonCode, index: number | null, description: string): FlagResult {
  return { key: flag.key, enabled, variant: enabled ? variant : null, payload: payloadFor(flag, enabled, variant), reason: { code, condition_index: index, description } };
}

/**
 * Evaluates one flag as PostHog does: inactive flags are off; a holdout takes its share first;
 * super groups decide for people who opted in (`$feature_enrollment/<key>`); then condition
 * groups are tried in order, properties ANDed, the rollout bucket checked; a match picks a variant.
 */
export function evaluateFlag(flag: FlagDefinition, context: EvaluationContext): FlagResult {
  if (!flag.active || flag.deleted) return result(flag, false, null, 'flag_disabled', null, 'Flag is disabled');
  const id = bucketId(flag, context);
  const properties = propertiesFor(flag, context);
  if (id === null || properties === null) return result(flag, false, null, 'no_group_type', null, 'The request has no group of the type this flag aggregates by');

  const holdout = flag.filters.holdout;
  if (holdout && holdoutHash(id) <= holdout.exclusion_percentage / 100) {
    return result(flag, true, `holdout-${holdout.id}`, 'holdout_condition_value', null, 'In the holdout group');
  }

  const bucket: Bucket = { flagKey: flag.key, id };

  const superGroup = flag.filters.super_groups?.[0];
  const superKey = superGroup?.properties?.[0]?.key;
  if (superGroup && superKey !== undefined && Object.prototype.hasOwnProperty.call(context.personProperties, superKey)) {
    const matched = conditionMatch(superGroup, bucket, context.personProperties, context) === 'match';
    return result(flag, matched, matched ? pickVariant(flag, id, superGroup.variant) : null, 'super_condition_value', 0, 'Super condition value');
  }

  let sawOutOfRollout: number | null = null;
  const groups = flag.filters.groups ?? [];
  for (const [index, group] of groups.entries()) {
    const outcome = conditionMatch(group, bucket, properties, context);
    if (outcome === 'match') {
      return result(flag, true, pickVariant(flag, id, group.variant), 'condition_match', index, `Matched condition set ${index + 1}`);
    }
    if (outcome === 'out_of_rollout' && sawOutOfRollout === null) sawOutOfRollout = index;
  }
  if (sawOutOfRollout !== null) return result(flag, false, null, 'out_of_rollout_bound', sawOutOfRollout, 'Out of rollout bound');
  return result(flag, false, null, 'no_condition_match', null, 'No matching condition set');
}
