import { CompiledPropertyFilter } from '@tributary/property-filters';
import { matchCohort } from './cohort-membership.js';
import type { ConditionGroup, FlagDefinition, PropertyFilter, Variant } from './definition.js';
import type { EvaluationContext } from './evaluation-context.js';
import type { FlagResult, ReasonCode } from './flag-result.js';

/**
 * A flag definition prepared for evaluation: decide evaluates every flag of a project on every
 * request, and reading definitions as stored (optional fields present on some flags, filters of
 * every shape) kept V8's property loads megamorphic. A plan holds the same facts in objects of
 * one shape each, with filters compiled, rollouts and variant bounds divided out, and the
 * strings of the results built. Definitions are replaced, never changed, when a flag changes,
 * so a plan is kept per definition object and never goes stale.
 *
 * A plan answers exactly as the definition read as stored would, malformed definitions
 * included: where reading a part as stored would throw (a filter that is not an object, say),
 * the error is kept and thrown when evaluation reaches that part, not before.
 */

/** A result, frozen: one object stands for every evaluation with the same outcome. */
function outcome(key: string, enabled: boolean, variant: string | null, payload: unknown, code: ReasonCode, index: number | null, description: string): FlagResult {
  return Object.freeze({ key, enabled, variant, payload, reason: Object.freeze({ code, condition_index: index, description }) });
}

/**
 * The results of a match by one condition (a condition group, or the super group), one per
 * variant, made on first use: a flag's results are few (its outcomes), while 50 flags a request
 * made two objects each per request. Shared results let decide keep each one's JSON beside it.
 */
export class MatchOutcomes {
  private readonly byVariant = new Map<string | null, FlagResult>();

  constructor(
    private readonly key: string,
    private readonly payloadOf: (variant: string | null) => unknown,
    private readonly code: ReasonCode,
    private readonly index: number,
    private readonly description: string,
  ) {}

  of(variant: string | null): FlagResult {
    let result = this.byVariant.get(variant);
    if (result === undefined) {
      result = outcome(this.key, true, variant, this.payloadOf(variant), this.code, this.index, this.description);
      this.byVariant.set(variant, result);
    }
    return result;
  }
}

/** An error met while planning a part, thrown when evaluation gets there. */
class Deferred {
  constructor(readonly error: unknown) {}
}

/** One filter of a condition group: a compiled property filter, or a cohort membership test. */
class FilterPlan {
  private readonly negation: boolean;
  private readonly property: CompiledPropertyFilter | null;
  private readonly cohortId: number;
  private readonly notIn: boolean;

  constructor(filter: PropertyFilter) {
    const cohort = filter.type === 'cohort';
    this.property = cohort ? null : new CompiledPropertyFilter(filter);
    this.cohortId = cohort ? Number(filter.value) : 0;
    this.notIn = cohort && filter.operator === 'not_in';
    this.negation = Boolean(filter.negation);
  }

  matches(properties: Record<string, unknown>, context: EvaluationContext): boolean {
    const matched = this.property === null ? matchCohort(this.cohortId, this.notIn, context) : this.property.matches(properties, context.now);
    return this.negation ? !matched : matched;
  }
}

/** A condition group: its filters (ANDed), its rollout and its variant override. */
export class ConditionPlan {
  private readonly filters: FilterPlan[] = [];
  /** The filter, or the group itself, that could not be planned: thrown once the filters before it match. */
  private readonly failure: Deferred | null = null;
  /** Whether the rollout is below 100 %, so the bucket must be hashed; a bucket is at most 1. */
  readonly sampled: boolean = false;
  readonly bound: number = 0;
  readonly variant: string | null | undefined = undefined;
  /** Its matches, and the result when it was the first group whose properties held but whose rollout left the id out. */
  readonly matches: MatchOutcomes;
  readonly outOfRollout: FlagResult;

  constructor(group: ConditionGroup, readonly index: number, key: string, payloadOf: (variant: string | null) => unknown, code: ReasonCode = 'condition_match') {
    this.matches = new MatchOutcomes(key, payloadOf, code, index, code === 'condition_match' ? `Matched condition set ${index + 1}` : 'Super condition value');
    this.outOfRollout = outcome(key, false, null, null, 'out_of_rollout_bound', index, 'Out of rollout bound');
    try {
      for (const filter of group.properties ?? []) this.filters.push(new FilterPlan(filter));
      const rollout = group.rollout_percentage;
      this.sampled = rollout !== undefined && rollout !== null && rollout < 100;
      this.bound = (rollout as number) / 100;
      this.variant = group.variant;
    } catch (error) {
      this.failure = new Deferred(error);
    }
  }

  /** Whether every filter holds; the rollout is the caller's, which hashes once per flag. */
  propertiesMatch(properties: Record<string, unknown>, context: EvaluationContext): boolean {
    const filters = this.filters;
    for (let i = 0; i < filters.length; i++) if (!filters[i]!.matches(properties, context)) return false;
    if (this.failure !== null) throw this.failure.error;
    return true;
  }
}

/** The multivariate variants, with the running share each ends at, and each one's payload. */
export class VariantsPlan {
  readonly keys: string[] = [];
  readonly bounds: number[] = [];
  readonly payloads: unknown[] = [];
  readonly failure: Deferred | null = null;

  /** `source` is the list as stored: an override is looked up in it as stored. */
  constructor(readonly source: Variant[], payloadOf: (variant: string | null | undefined) => unknown) {
    try {
      let sum = 0;
      for (const variant of source) {
        sum += variant.rollout_percentage / 100;
        this.keys.push(variant.key);
        this.bounds.push(sum);
        this.payloads.push(payloadOf(variant.key));
      }
    } catch (error) {
      this.failure = new Deferred(error);
    }
  }
}

/** The super group that decides for people who opted in, and the property that says they did. */
export class SuperGroupPlan {
  constructor(
    readonly key: string,
    readonly condition: ConditionPlan,
  ) {}
}

export class HoldoutPlan {
  readonly result: FlagResult;

  constructor(
    readonly threshold: number,
    key: string,
    variant: string,
    payload: unknown,
  ) {
    this.result = outcome(key, true, variant, payload, 'holdout_condition_value', null, 'In the holdout group');
  }
}

export class FlagPlan {
  readonly key: string;
  readonly disabled: boolean;
  /** `key.`, the prefix of every hash of this flag. */
  readonly hashPrefix: string = '';
  /** The group type index a group flag aggregates by; null for a person flag. */
  readonly groupTypeIndex: number | null = null;
  readonly holdout: HoldoutPlan | null = null;
  readonly superGroup: SuperGroupPlan | null = null;
  readonly groups: ConditionPlan[] = [];
  /** Reading the condition groups as stored failed (they are not a list): thrown when evaluation reaches them. */
  readonly groupsFailure: Deferred | null = null;
  /** Null when the flag has no variants. */
  readonly variants: VariantsPlan | null = null;
  /** The results that are the same for everyone they apply to. */
  readonly disabledResult: FlagResult;
  readonly noGroupType: FlagResult;
  readonly superConditionOff: FlagResult;
  readonly noConditionMatch: FlagResult;

  constructor(flag: FlagDefinition) {
    const key = flag.key;
    this.key = key;
    this.disabledResult = outcome(key, false, null, null, 'flag_disabled', null, 'Flag is disabled');
    this.noGroupType = outcome(key, false, null, null, 'no_group_type', null, 'The request has no group of the type this flag aggregates by');
    this.superConditionOff = outcome(key, false, null, null, 'super_condition_value', 0, 'Super condition value');
    this.noConditionMatch = outcome(key, false, null, null, 'no_condition_match', null, 'No matching condition set');
    this.disabled = !flag.active || Boolean(flag.deleted);
    if (this.disabled) return;
    const filters = flag.filters;
    const index = filters.aggregation_group_type_index;
    this.groupTypeIndex = index === undefined || index === null ? null : index;
    this.hashPrefix = `${flag.key}.`;
    const payloads = filters.payloads;
    // A match's payload follows from its variant alone: `true`'s when it has none.
    const payloadOf = (variant: string | null | undefined): unknown => payloads?.[variant ?? 'true'] ?? null;

    const holdout = filters.holdout;
    if (holdout) {
      const variant = `holdout-${holdout.id}`;
      this.holdout = new HoldoutPlan(holdout.exclusion_percentage / 100, key, variant, payloadOf(variant));
    }
    const superGroup = filters.super_groups?.[0];
    const superKey = superGroup?.properties?.[0]?.key;
    if (superGroup && superKey !== undefined) this.superGroup = new SuperGroupPlan(superKey, new ConditionPlan(superGroup, 0, key, payloadOf, 'super_condition_value'));

    try {
      const groups = filters.groups ?? [];
      for (const [i, group] of groups.entries()) this.groups.push(new ConditionPlan(group, i, key, payloadOf));
    } catch (error) {
      this.groupsFailure = new Deferred(error);
    }
    const variants = filters.multivariate?.variants ?? [];
    if (variants.length !== 0) this.variants = new VariantsPlan(variants, payloadOf);
  }
}

const plans = new WeakMap<FlagDefinition, FlagPlan>();

/** The plan of a definition, built on its first evaluation and reused while the object lives. */
export function planFor(flag: FlagDefinition): FlagPlan {
  let plan = plans.get(flag);
  if (plan === undefined) {
    plan = new FlagPlan(flag);
    plans.set(flag, plan);
  }
  return plan;
}
