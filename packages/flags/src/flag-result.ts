export type ReasonCode =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'flag_disabled'
  | 'super_condition_value'
  | 'holdout_condition_value';

/**
 * One flag's answer. Frozen and shared: every evaluation with the same outcome (flag definition,
 * reason, condition and variant) returns the same object, so a caller may key what it derives
 * from a result (its JSON, say) on the object.
 */
export interface FlagResult {
  readonly key: string;
  readonly enabled: boolean;
  readonly variant: string | null;
  readonly payload: unknown;
  readonly reason: { readonly code: ReasonCode; readonly condition_index: number | null; readonly description: string };
}
