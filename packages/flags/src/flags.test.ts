import { createHash } from 'node:crypto';
import { evaluateFlag, hashFor, matchProperty, validateFlagDefinition, type EvaluationContext, type FlagDefinition } from './index.js';

const now = new Date('2026-06-01T00:00:00Z');
const context = (overrides: Partial<EvaluationContext> = {}): EvaluationContext => ({
  distinctId: 'distinct_id_1',
  personProperties: {},
  groups: {},
  groupProperties: {},
  groupTypeMapping: { 0: 'company' },
  now,
  ...overrides,
});
const flag = (filters: FlagDefinition['filters'], overrides: Partial<FlagDefinition> = {}): FlagDefinition => ({ id: 1, key: 'test-flag', active: true, filters, ...overrides });

describe('hash', () => {
  it('matches PostHog’s published value for test-flag and distinct_id_1', () => {
    expect(hashFor('test-flag', 'distinct_id_1')).toBeCloseTo(0.35140843114131903, 15);
  });

  it('is in [0, 1] and changes with the salt', () => {
    const plain = hashFor('k', 'id');
    expect(plain).toBeGreaterThanOrEqual(0);
    expect(plain).toBeLessThanOrEqual(1);
    expect(hashFor('k', 'id', 'variant')).not.toBe(plain);
  });

  it('gives what reading node:crypto’s sha1 hex as posthog-node does gives, bit for bit', () => {
    const reference = (text: string) => parseInt(createHash('sha1').update(text).digest('hex').slice(0, 15), 16) / 0xfffffffffffffff;
    // Every length across SHA-1's block and padding edges, text beyond ASCII (two, three and four
    // UTF-8 bytes, an unpaired surrogate), a long id, and a deterministic spread of the rest.
    const ids = Array.from({ length: 200 }, (_, n) => 'x'.repeat(n));
    ids.push('é', 'José', '日本語のユーザー', '👩‍💻 dev', 'lone \ud800 surrogate', 'tail \udc00', 'a'.repeat(10_000) + 'ü');
    let seed = 1;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 2_000; i++) ids.push(Array.from({ length: next() % 90 }, () => String.fromCharCode(next() % 5 === 0 ? next() % 0xffff : 32 + (next() % 95))).join(''));
    for (const id of ids) {
      expect([id, hashFor('flag-key', id)]).toEqual([id, reference(`flag-key.${id}`)]);
      expect([id, hashFor('flag-key', id, 'variant')]).toEqual([id, reference(`flag-key.${id}variant`)]);
    }
  });
});

describe('rollout', () => {
  it('matches when hash <= rollout / 100 and not otherwise (bucket 0.3514 for distinct_id_1)', () => {
    expect(evaluateFlag(flag({ groups: [{ rollout_percentage: 36 }] }), context()).enabled).toBe(true);
    const out = evaluateFlag(flag({ groups: [{ rollout_percentage: 35 }] }), context());
    expect(out).toMatchObject({ enabled: false, reason: { code: 'out_of_rollout_bound', condition_index: 0 } });
  });

  it('no rollout percentage means everyone', () => {
    expect(evaluateFlag(flag({ groups: [{ properties: [] }] }), context()).reason).toEqual({ code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' });
  });

  it('rolls out about the given share of many ids', () => {
    const definition = flag({ groups: [{ rollout_percentage: 30 }] });
    let on = 0;
    for (let i = 0; i < 5000; i += 1) if (evaluateFlag(definition, context({ distinctId: `user-${i}` })).enabled) on += 1;
    expect(on / 5000).toBeGreaterThan(0.27);
    expect(on / 5000).toBeLessThan(0.33);
  });
});

describe('conditions', () => {
  const definition = flag({
    groups: [
      { properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }, { key: 'age', value: 18, operator: 'gte', type: 'person' }] },
      { properties: [{ key: 'email', value: '@example.com', operator: 'icontains', type: 'person' }], rollout_percentage: 100 },
    ],
  });

  it('ANDs the filters of a group and ORs the groups in order, reporting which matched', () => {
    expect(evaluateFlag(definition, context({ personProperties: { plan: 'PRO', age: 30 } })).reason.condition_index).toBe(0);
    expect(evaluateFlag(definition, context({ personProperties: { plan: 'pro', age: 10, email: 'a@EXAMPLE.com' } })).reason.condition_index).toBe(1);
    expect(evaluateFlag(definition, context({ personProperties: { plan: 'pro', age: 10 } }))).toMatchObject({ enabled: false, reason: { code: 'no_condition_match' } });
  });

  it('inactive and deleted flags are off', () => {
    expect(evaluateFlag(flag({ groups: [{}] }, { active: false }), context()).reason.code).toBe('flag_disabled');
    expect(evaluateFlag(flag({ groups: [{}] }, { deleted: true }), context()).enabled).toBe(false);
  });
});

describe('property operators', () => {
  const m = (operator: string, value: unknown, properties: Record<string, unknown>) => matchProperty({ key: 'p', operator, value }, properties, now);

  it('exact and is_not ignore case, and an array value means any element', () => {
    expect(m('exact', ['a', 'B'], { p: 'b' })).toBe(true);
    expect(m('exact', 'x', { p: 'y' })).toBe(false);
    expect(m('is_not', ['a', 'b'], { p: 'C' })).toBe(true);
    expect(m('exact', 5, { p: '5' })).toBe(true);
  });

  it('a missing property: exact false, is_not true, is_not_set true, is_set false', () => {
    expect(m('exact', 'a', {})).toBe(false);
    expect(m('is_not', 'a', {})).toBe(true);
    expect(m('is_not_set', null, {})).toBe(true);
    expect(m('is_set', null, {})).toBe(false);
    expect(m('is_set', null, { p: 0 })).toBe(true);
  });

  it('icontains and not_icontains ignore case', () => {
    expect(m('icontains', 'GMAIL', { p: 'me@gmail.com' })).toBe(true);
    expect(m('not_icontains', 'gmail', { p: 'me@gmail.com' })).toBe(false);
  });

  it('regex matches, an invalid pattern never matches', () => {
    expect(m('regex', '^a.c$', { p: 'abc' })).toBe(true);
    expect(m('not_regex', '^a', { p: 'xbc' })).toBe(true);
    expect(m('regex', '(', { p: '(' })).toBe(false);
    expect(m('not_regex', '(', { p: 'x' })).toBe(false);
  });

  it('compares numerically when both sides are numbers, else as strings', () => {
    expect(m('gt', 5, { p: '10' })).toBe(true);
    expect(m('lt', '5', { p: 10 })).toBe(false);
    expect(m('gt', 'b', { p: 'c' })).toBe(true);
    expect(m('lte', 3, { p: 3 })).toBe(true);
  });

  it('compares dates, ISO and relative', () => {
    expect(m('is_date_before', '2026-01-01', { p: '2025-12-31T00:00:00Z' })).toBe(true);
    expect(m('is_date_after', '-7d', { p: '2026-05-30T00:00:00Z' })).toBe(true);
    expect(m('is_date_after', '-7d', { p: '2026-05-01T00:00:00Z' })).toBe(false);
    expect(m('is_date_before', 'nonsense', { p: '2026-05-01' })).toBe(false);
  });
});

describe('multivariate', () => {
  const variants = [
    { key: 'control', rollout_percentage: 50 },
    { key: 'test', rollout_percentage: 30 },
    { key: 'other', rollout_percentage: 20 },
  ];
  const definition = flag({ groups: [{}], multivariate: { variants }, payloads: { test: '{"color":"red"}', control: '"blue"' } });

  it('picks the variant whose running share first exceeds the variant hash', () => {
    const h = hashFor('test-flag', 'distinct_id_1', 'variant');
    const expected = h < 0.5 ? 'control' : h < 0.8 ? 'test' : 'other';
    expect(evaluateFlag(definition, context()).variant).toBe(expected);
  });

  it('spreads many ids in the declared proportions', () => {
    const counts: Record<string, number> = {};
    for (let i = 0; i < 6000; i += 1) {
      const v = evaluateFlag(definition, context({ distinctId: `u${i}` })).variant!;
      counts[v] = (counts[v] ?? 0) + 1;
    }
    expect(counts.control! / 6000).toBeCloseTo(0.5, 1);
    expect(counts.test! / 6000).toBeCloseTo(0.3, 1);
  });

  it('honours a condition group’s variant override when it names a variant', () => {
    expect(evaluateFlag(flag({ groups: [{ variant: 'other' }], multivariate: { variants } }), context()).variant).toBe('other');
    expect(evaluateFlag(flag({ groups: [{ variant: 'missing' }], multivariate: { variants } }), context()).variant).not.toBe('missing');
  });

  it('returns the payload of the chosen variant, or of "true" for a boolean flag', () => {
    const result = evaluateFlag(definition, context());
    expect(result.payload).toBe(definition.filters.payloads![result.variant!]);
    expect(evaluateFlag(flag({ groups: [{}], payloads: { true: '{"a":1}' } }), context()).payload).toBe('{"a":1}');
    expect(evaluateFlag(flag({ groups: [{ rollout_percentage: 0 }], payloads: { true: 'x' } }), context()).payload).toBeNull();
  });
});

describe('group flags', () => {
  const definition = flag({ aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'tier', value: 'gold', type: 'group', group_type_index: 0 }] }] });

  it('are off without a group of their type in the request', () => {
    expect(evaluateFlag(definition, context())).toMatchObject({ enabled: false, reason: { code: 'no_group_type' } });
  });

  it('match on the group’s properties and bucket on the group key', () => {
    expect(evaluateFlag(definition, context({ groups: { company: 'acme' }, groupProperties: { company: { tier: 'gold' } } })).enabled).toBe(true);
    expect(evaluateFlag(definition, context({ groups: { company: 'acme' }, groupProperties: { company: { tier: 'tin' } } })).enabled).toBe(false);
    const rollout = flag({ aggregation_group_type_index: 0, groups: [{ rollout_percentage: 50 }] });
    const expected = hashFor('test-flag', 'acme') <= 0.5;
    expect(evaluateFlag(rollout, context({ distinctId: 'whoever', groups: { company: 'acme' } })).enabled).toBe(expected);
  });

  it('read only the request’s own groups, whatever the group type is called', () => {
    const definition = flag({ aggregation_group_type_index: 0, groups: [{ rollout_percentage: 100 }] });
    for (const type of ['constructor', 'toString', '__proto__']) {
      const mapping = { 0: type };
      expect(evaluateFlag(definition, context({ groupTypeMapping: mapping })).reason.code).toBe('no_group_type');
      const groups = Object.fromEntries([[type, 'acme']]);
      expect(evaluateFlag(definition, context({ groupTypeMapping: mapping, groups })).enabled).toBe(true);
    }
  });

  it('bucket a group key that the request sent as a number on its text', () => {
    const bucket = hashFor('test-flag', '17');
    for (const percentage of [10, 30, 50, 70, 90]) {
      const rollout = flag({ aggregation_group_type_index: 0, groups: [{ rollout_percentage: percentage }] });
      expect(evaluateFlag(rollout, context({ groups: { company: 17 as unknown as string } })).enabled).toBe(bucket <= percentage / 100);
    }
  });
});

describe('cohorts, super groups, holdouts and continuity', () => {
  it('matches static and dynamic cohorts, and their negation', () => {
    const cohorts = new Map([
      [1, { id: 1, kind: 'static' as const }],
      [2, { id: 2, kind: 'dynamic' as const, filters: { type: 'OR' as const, values: [{ key: 'plan', value: 'pro', type: 'person' }] } }],
    ]);
    const inCohort = (id: number, operator = 'in') => flag({ groups: [{ properties: [{ key: 'id', type: 'cohort', value: id, operator }] }] });
    expect(evaluateFlag(inCohort(1), context({ cohorts, listedCohortIds: new Set([1]) })).enabled).toBe(true);
    expect(evaluateFlag(inCohort(1), context({ cohorts, listedCohortIds: new Set() })).enabled).toBe(false);
    expect(evaluateFlag(inCohort(2), context({ cohorts, personProperties: { plan: 'pro' } })).enabled).toBe(true);
    expect(evaluateFlag(inCohort(2, 'not_in'), context({ cohorts, personProperties: { plan: 'pro' } })).enabled).toBe(false);
  });

  it('matches a precomputed cohort by its listed members alone, whatever the person’s properties', () => {
    const cohorts = new Map([[3, { id: 3, kind: 'precomputed' as const }]]);
    const inCohort = (operator: string) => flag({ groups: [{ properties: [{ key: 'id', type: 'cohort', value: 3, operator }] }] });
    expect(evaluateFlag(inCohort('in'), context({ cohorts, listedCohortIds: new Set([3]) })).enabled).toBe(true);
    expect(evaluateFlag(inCohort('in'), context({ cohorts, listedCohortIds: new Set(), personProperties: { purchase: 'performed_event' } })).enabled).toBe(false);
    expect(evaluateFlag(inCohort('not_in'), context({ cohorts, listedCohortIds: new Set() })).enabled).toBe(true);
  });

  it('super groups decide for people who opted in through $feature_enrollment/<key>', () => {
    const definition = flag({
      groups: [{ rollout_percentage: 0 }],
      super_groups: [{ properties: [{ key: '$feature_enrollment/test-flag', value: ['true'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }],
    });
    expect(evaluateFlag(definition, context({ personProperties: { '$feature_enrollment/test-flag': true } }))).toMatchObject({ enabled: true, reason: { code: 'super_condition_value' } });
    expect(evaluateFlag(definition, context({ personProperties: { '$feature_enrollment/test-flag': false } }))).toMatchObject({ enabled: false, reason: { code: 'super_condition_value' } });
    expect(evaluateFlag(definition, context()).reason.code).toBe('out_of_rollout_bound');
  });

  it('a holdout takes its share first, tagged with the holdout variant', () => {
    const all = flag({ groups: [{}], holdout: { id: 7, exclusion_percentage: 100 } });
    expect(evaluateFlag(all, context())).toMatchObject({ enabled: true, variant: 'holdout-7', reason: { code: 'holdout_condition_value' } });
    expect(evaluateFlag(flag({ groups: [{}], holdout: { id: 7, exclusion_percentage: 0 } }), context()).variant).toBeNull();
  });

  it('hashes the continuity override instead of the distinct id', () => {
    const definition = flag({ groups: [{ rollout_percentage: 36 }] });
    expect(evaluateFlag(definition, context({ distinctId: 'someone-else', hashKeyOverrides: { 'test-flag': 'distinct_id_1' } })).enabled).toBe(true);
  });

  it('reads only overrides of the flag’s own key, whatever the key (constructor, toString, __proto__)', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const definition = flag({ groups: [{ rollout_percentage: 50 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } }, { key });
      for (let i = 0; i < 40; i++) {
        const alone = evaluateFlag(definition, context({ distinctId: `u${i}` }));
        expect(evaluateFlag(definition, context({ distinctId: `u${i}`, hashKeyOverrides: {} }))).toBe(alone);
        expect(evaluateFlag(definition, context({ distinctId: `u${i}`, hashKeyOverrides: { other: 'x' } }))).toBe(alone);
      }
      const overridden = Object.fromEntries([[key, 'u7']]);
      expect(evaluateFlag(definition, context({ distinctId: 'someone-else', hashKeyOverrides: overridden }))).toBe(evaluateFlag(definition, context({ distinctId: 'u7' })));
    }
  });
});

describe('validating definitions', () => {
  it('accepts a well-formed definition', () => {
    expect(validateFlagDefinition({ filters: { groups: [{ properties: [{ key: 'a', operator: 'regex', value: '^x' }], rollout_percentage: 50 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 60 }, { key: 'b', rollout_percentage: 40 }] } } })).toEqual([]);
  });

  it('names variant percentages that do not add up to 100', () => {
    expect(validateFlagDefinition({ filters: { multivariate: { variants: [{ key: 'a', rollout_percentage: 60 }, { key: 'b', rollout_percentage: 30 }] } } })).toEqual([
      { attr: 'filters.multivariate.variants', detail: 'Variant rollout percentages must add up to 100, not 90.' },
    ]);
  });

  it('names unknown operators, bad regexes and bad rollouts', () => {
    const problems = validateFlagDefinition({ filters: { groups: [{ properties: [{ key: 'a', operator: 'between', value: 1 }, { key: 'b', operator: 'regex', value: '(' }], rollout_percentage: 120 }] } });
    expect(problems.map((p) => p.attr)).toEqual(['filters.groups[0].rollout_percentage', 'filters.groups[0].properties[0].operator', 'filters.groups[0].properties[1].value']);
  });

  it('requires a value for every operator except is_set and is_not_set', () => {
    const problems = validateFlagDefinition({ filters: { groups: [{ properties: [{ key: 'a', operator: 'exact' }, { key: 'b', operator: 'is_set' }, { key: 'c' }] }] } });
    expect(problems.map((p) => p.attr)).toEqual(['filters.groups[0].properties[0].value', 'filters.groups[0].properties[2].value']);
  });

  it('a stored filter without a value matches nothing instead of throwing', () => {
    const now = new Date();
    expect(matchProperty({ key: 'plan', operator: 'exact' } as never, { plan: 'pro' }, now)).toBe(false);
    expect(matchProperty({ key: 'plan', operator: 'icontains' } as never, { plan: 'pro' }, now)).toBe(false);
  });

  it('names a group variant override that is not a variant, and a bad group type index', () => {
    expect(validateFlagDefinition({ filters: { groups: [{ variant: 'nope' }], aggregation_group_type_index: 9 } }).map((p) => p.attr)).toEqual(['filters.aggregation_group_type_index', 'filters.groups[0].variant']);
  });
});
