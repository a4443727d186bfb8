import { evaluateFlag } from './evaluate-flag.js';
import type { EvaluationContext } from './evaluation-context.js';
import type { FlagDefinition } from './definition.js';
import { planFor } from './flag-plan.js';

const context = (personProperties: Record<string, unknown> = {}): EvaluationContext => ({
  distinctId: 'distinct_id_1',
  personProperties,
  groups: {},
  groupProperties: {},
  groupTypeMapping: {},
  now: new Date('2026-06-01T00:00:00Z'),
});
const definition = (filters: unknown): FlagDefinition => ({ id: 1, key: 'test-flag', active: true, filters: filters as FlagDefinition['filters'] });
const pro = { key: 'plan', value: 'pro', operator: 'exact', type: 'person' };

describe('flag plans', () => {
  it('are built once per definition object and reused for every evaluation of it', () => {
    const flag = definition({ groups: [{ properties: [pro] }] });
    expect(planFor(flag)).toBe(planFor(flag));
    expect(planFor(definition({ groups: [{ properties: [pro] }] }))).not.toBe(planFor(flag));
  });

  it('a definition replaced by a changed one answers as the new one', () => {
    const before = definition({ groups: [{ properties: [pro] }] });
    expect(evaluateFlag(before, context({ plan: 'pro' })).enabled).toBe(true);
    const after = { ...before, filters: { groups: [{ properties: [{ ...pro, value: 'enterprise' }] }] } };
    expect(evaluateFlag(after, context({ plan: 'pro' })).enabled).toBe(false);
    expect(evaluateFlag(before, context({ plan: 'pro' })).enabled).toBe(true);
  });

  it('answer one frozen object per outcome of a definition: ids with the same outcome share it, others get their own', () => {
    const flag = definition({ groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }, { rollout_percentage: 50 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } });
    const byOutcome = new Map<string, unknown>();
    for (let i = 0; i < 400; i++) {
      const result = evaluateFlag(flag, { ...context({ plan: i % 2 ? 'pro' : 'free' }), distinctId: `u${i}` });
      expect(Object.isFrozen(result) && Object.isFrozen(result.reason)).toBe(true);
      const outcome = `${result.reason.code}/${result.reason.condition_index}/${result.variant}`;
      if (!byOutcome.has(outcome)) byOutcome.set(outcome, result);
      expect(result).toBe(byOutcome.get(outcome));
    }
    // Two matching groups with two variants each, and out of rollout.
    expect([...byOutcome.keys()].sort()).toEqual(['condition_match/0/a', 'condition_match/0/b', 'condition_match/1/a', 'condition_match/1/b', 'out_of_rollout_bound/1/null']);
    const copy = definition(flag.filters);
    expect(evaluateFlag(copy, context())).not.toBe(evaluateFlag(flag, context()));
    expect(evaluateFlag(copy, context())).toEqual(evaluateFlag(flag, context()));
  });

  it('keep a malformed part’s error until evaluation reaches it, as reading the definition as stored would', () => {
    const flag = definition({ groups: [{ properties: [pro, null] }, {}] });
    expect(evaluateFlag(flag, context({ plan: 'free' })).reason.condition_index).toBe(1);
    expect(() => evaluateFlag(flag, context({ plan: 'pro' }))).toThrow(TypeError);
    expect(evaluateFlag(definition({ groups: [{}, null] }), context()).reason.condition_index).toBe(0);
    expect(() => evaluateFlag(definition({ groups: [null] }), context())).toThrow(TypeError);
  });

  it('keep reading nothing of a disabled flag’s filters', () => {
    expect(evaluateFlag({ id: 1, key: 'off', active: false, filters: null as never }, context()).reason.code).toBe('flag_disabled');
  });
});
