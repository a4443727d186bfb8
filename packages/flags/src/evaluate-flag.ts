import type { FlagDefinition } from './definition.js';
import type { EvaluationContext } from './evaluation-context.js';
import { planFor, type ConditionPlan, type FlagPlan, type MatchOutcomes } from './flag-plan.js';
import type { FlagResult } from './flag-result.js';
import { holdoutHash, prefixedHash } from './hash.js';

const hasOwn = Object.prototype.hasOwnProperty;

function namesVariant(this: unknown, variant: { key: string }): boolean {
  return variant.key === this;
}

/** A match: the group's override if it names a variant, else the variant whose running share first exceeds the id's variant hash. */
function matched(plan: FlagPlan, id: string, override: string | null | undefined, outcomes: MatchOutcomes): FlagResult {
  const variants = plan.variants;
  if (variants === null) return outcomes.of(null);
  if (override && variants.source.some(namesVariant, override)) return outcomes.of(override);
  const h = prefixedHash(plan.hashPrefix, id, 'variant');
  if (variants.failure !== null) throw variants.failure.error;
  const bounds = variants.bounds;
  for (let i = 0; i < bounds.length; i++) {
    if (h < bounds[i]!) return outcomes.of(variants.keys[i]!);
  }
  return outcomes.of(null);
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
  if (plan.disabled) return plan.disabledResult;

  // The id a flag buckets on, and the properties its filters read: the person's (or the
  // continuity override's id), or those of the request's group of the flag's type.
  let id: string | null;
  let properties: Record<string, unknown> | null;
  const groupTypeIndex = plan.groupTypeIndex;
  if (groupTypeIndex === null) {
    // Own keys only: a flag keyed `constructor` would otherwise bucket Object's constructor.
    const overrides = context.hashKeyOverrides;
    id = overrides !== undefined && hasOwn.call(overrides, plan.key) ? overrides[plan.key]! : context.distinctId;
    properties = context.personProperties;
  } else {
    const type = context.groupTypeMapping[groupTypeIndex];
    id = type !== undefined && hasOwn.call(context.groups, type) ? context.groups[type]! : null;
    properties = type === undefined ? null : hasOwn.call(context.groupProperties, type) ? context.groupProperties[type]! : {};
  }
  if (id === null || properties === null) return plan.noGroupType;

  const holdout = plan.holdout;
  if (holdout !== null && holdoutHash(id) <= holdout.threshold) {
    return holdout.result;
  }

  // Every condition group buckets the same id: hash it at most once, and not at all for full rollouts.
  let hash = NOT_HASHED;
  const superGroup = plan.superGroup;
  if (superGroup !== null && hasOwn.call(context.personProperties, superGroup.key)) {
    const condition = superGroup.condition;
    if (!condition.propertiesMatch(context.personProperties, context)) return plan.superConditionOff;
    if (condition.sampled && prefixedHash(plan.hashPrefix, id, '') > condition.bound) return plan.superConditionOff;
    return matched(plan, id, condition.variant, condition.matches);
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
    return matched(plan, id, group.variant, group.matches);
  }
  if (outOfRollout !== null) return outOfRollout.outOfRollout;
  return plan.noConditionMatch;
}
