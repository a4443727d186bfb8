import { evaluateFlag, type EvaluationContext } from './evaluate-flag.js';
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

  it('return a fresh result object from every evaluation', () => {
    const flag = definition({ groups: [{}] });
    const first = evaluateFlag(flag, context());
    expect(evaluateFlag(flag, context())).not.toBe(first);
    expect(evaluateFlag(flag, context()).reason).not.toBe(first.reason);
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
