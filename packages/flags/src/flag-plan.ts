import { CompiledPropertyFilter } from '@tributary/property-filters';
import { matchCohort } from './cohort-membership.js';
import type { ConditionGroup, FlagDefinition, PropertyFilter, Variant } from './definition.js';
import type { EvaluationContext } from './evaluate-flag.js';

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
  readonly description: string;

  constructor(group: ConditionGroup, readonly index: number) {
    this.description = `Matched condition set ${index + 1}`;
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
  constructor(
    readonly threshold: number,
    readonly variant: string,
    readonly payload: unknown,
  ) {}
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
  /** The payload of the flag's value `true`, for a match without a variant. */
  readonly truePayload: unknown = null;
  /** The payloads as stored, for a variant override's. */
  readonly payloadsSource: Record<string, unknown> | undefined = undefined;

  constructor(flag: FlagDefinition) {
    this.key = flag.key;
    this.disabled = !flag.active || Boolean(flag.deleted);
    if (this.disabled) return;
    const filters = flag.filters;
    const index = filters.aggregation_group_type_index;
    this.groupTypeIndex = index === undefined || index === null ? null : index;
    this.hashPrefix = `${flag.key}.`;
    const payloads = filters.payloads;
    this.payloadsSource = payloads;
    const payloadOf = (variant: string | null | undefined): unknown => payloads?.[variant ?? 'true'] ?? null;
    this.truePayload = payloadOf(null);

    const holdout = filters.holdout;
    if (holdout) {
      const variant = `holdout-${holdout.id}`;
      this.holdout = new HoldoutPlan(holdout.exclusion_percentage / 100, variant, payloadOf(variant));
    }
    const superGroup = filters.super_groups?.[0];
    const superKey = superGroup?.properties?.[0]?.key;
    if (superGroup && superKey !== undefined) this.superGroup = new SuperGroupPlan(superKey, new ConditionPlan(superGroup, 0));

    try {
      const groups = filters.groups ?? [];
      for (const [i, group] of groups.entries()) this.groups.push(new ConditionPlan(group, i));
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
