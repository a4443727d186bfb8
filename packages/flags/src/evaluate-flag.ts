import type { CohortDefinition, FlagDefinition } from './definition.js';
import { planFor, type ConditionPlan, type FlagPlan } from './flag-plan.js';
import { holdoutHash, prefixedHash } from './hash.js';

export { isCohortMember } from './cohort-membership.js';

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

const hasOwn = Object.prototype.hasOwnProperty;

function result(plan: FlagPlan, enabled: boolean, variant: string | null, payload: unknown, code: ReasonCode, index: number | null, description: string): FlagResult {
  return { key: plan.key, enabled, variant, payload, reason: { code, condition_index: index, description } };
}

const off = (plan: FlagPlan, code: ReasonCode, index: number | null, description: string) => result(plan, false, null, null, code, index, description);

function namesVariant(this: unknown, variant: { key: string }): boolean {
  return variant.key === this;
}

/** A match: the group's override if it names a variant, else the variant whose running share first exceeds the id's variant hash. */
function matched(plan: FlagPlan, id: string, override: string | null | undefined, code: ReasonCode, index: number, description: string): FlagResult {
  const variants = plan.variants;
  if (variants === null) return result(plan, true, null, plan.truePayload, code, index, description);
  if (override && variants.source.some(namesVariant, override)) return result(plan, true, override, plan.payloadsSource?.[override] ?? null, code, index, description);
  const h = prefixedHash(plan.hashPrefix, id, 'variant');
  if (variants.failure !== null) throw variants.failure.error;
  const bounds = variants.bounds;
  for (let i = 0; i < bounds.length; i++) {
    if (h < bounds[i]!) return result(plan, true, variants.keys[i]!, variants.payloads[i], code, index, description);
  }
  return result(plan, true, null, plan.truePayload, code, index, description);
}

/** A bucket is in [0, 1]: below that, not hashed yet. */
const NOT_HASHED = -1;

/**
 * Evaluates one flag as PostHog does: inactive flags are off; a holdout takes its share first;
 * super groups decide for people who opted in (`$feature_enrollment/<key>`); then condition
 * groups are tried in order, properties ANDed, the rollout bucket checked; a match picks a variant.
 * The definition is read through its plan (flag-plan.ts), built once per definition object.
 */
export function evaluateFlag(flag: FlagDefinition, context: EvaluationContext): FlagResult {
  const plan = planFor(flag);
  if (plan.disabled) return off(plan, 'flag_disabled', null, 'Flag is disabled');

  // The id a flag buckets on, and the properties its filters read: the person's (or the
  // continuity override's id), or those of the request's group of the flag's type.
  let id: string | null;
  let properties: Record<string, unknown> | null;
  const groupTypeIndex = plan.groupTypeIndex;
  if (groupTypeIndex === null) {
    id = context.hashKeyOverrides?.[plan.key] ?? context.distinctId;
    properties = context.personProperties;
  } else {
    const type = context.groupTypeMapping[groupTypeIndex];
    id = type === undefined ? null : (context.groups[type] ?? null);
    properties = type === undefined ? null : (context.groupProperties[type] ?? {});
  }
  if (id === null || properties === null) return off(plan, 'no_group_type', null, 'The request has no group of the type this flag aggregates by');

  const holdout = plan.holdout;
  if (holdout !== null && holdoutHash(id) <= holdout.threshold) {
    return result(plan, true, holdout.variant, holdout.payload, 'holdout_condition_value', null, 'In the holdout group');
  }

  // Every condition group buckets the same id: hash it at most once, and not at all for full rollouts.
  let hash = NOT_HASHED;
  const superGroup = plan.superGroup;
  if (superGroup !== null && hasOwn.call(context.personProperties, superGroup.key)) {
    const condition = superGroup.condition;
    if (!condition.propertiesMatch(context.personProperties, context)) return off(plan, 'super_condition_value', 0, 'Super condition value');
    if (condition.sampled && prefixedHash(plan.hashPrefix, id, '') > condition.bound) return off(plan, 'super_condition_value', 0, 'Super condition value');
    return matched(plan, id, condition.variant, 'super_condition_value', 0, 'Super condition value');
  }

  if (plan.groupsFailure !== null) throw plan.groupsFailure.error;
  let outOfRollout: ConditionPlan | null = null;
  const groups = plan.groups;
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]!;
    if (!group.propertiesMatch(properties, context)) continue;
    if (group.sampled) {
      if (hash === NOT_HASHED) hash = prefixedHash(plan.hashPrefix, id, '');
      if (hash > group.bound) {
        outOfRollout ??= group;
        continue;
      }
    }
    return matched(plan, id, group.variant, 'condition_match', group.index, group.description);
  }
  if (outOfRollout !== null) return off(plan, 'out_of_rollout_bound', outOfRollout.index, 'Out of rollout bound');
  return off(plan, 'no_condition_match', null, 'No matching condition set');
}
