import { evaluateFlag, type FlagDefinition, type FlagResult } from '@tributary/flags';
import { decideResponse, flagsResponse, payloadText, remoteConfigMembers, type Evaluated } from './flag-responses.js';
import { remoteConfig } from './sdk-config-routes.js';

type Pair = { flag: FlagDefinition; result: FlagResult };

/** The answers' shapes as objects, serialised by JSON.stringify: what the joined texts must equal byte for byte. */
const flagsShape = (results: Pair[], errors: boolean, requestId: string) => ({
  flags: Object.fromEntries(
    results.map(({ flag, result }) => [
      flag.key,
      {
        key: flag.key,
        enabled: result.enabled,
        variant: result.variant,
        reason: result.reason,
        metadata: { id: flag.id, version: flag.version ?? 1, description: null, payload: payloadText(result.payload) ?? undefined },
      },
    ]),
  ),
  errorsWhileComputingFlags: errors,
  requestId,
  evaluatedAt: EVALUATED_AT,
});

const EVALUATED_AT = 1_700_000_000_123;
/** A /flags answer without the config, as most tests here build it. */
const flagsAnswer = (errors: boolean, requestId: string) => ({ errors, requestId, evaluatedAt: EVALUATED_AT, config: null });

const decideShape = (results: Pair[], errors: boolean, version: number) => {
  const common = {
    config: { enable_collect_everything: true },
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: ['gzip', 'gzip-js', 'lz64'],
    errorsWhileComputingFlags: errors,
  };
  if (version <= 1) return { ...common, featureFlags: results.filter(({ result }) => result.enabled).map(({ flag }) => flag.key) };
  const shown = version === 2 ? results.filter(({ result }) => result.enabled) : results;
  return {
    ...common,
    featureFlags: Object.fromEntries(shown.map(({ flag, result }) => [flag.key, result.enabled ? (result.variant ?? true) : false])),
    featureFlagPayloads: Object.fromEntries(results.filter(({ result }) => result.payload !== null).map(({ flag, result }) => [flag.key, payloadText(result.payload)])),
  };
};

const KEYS = ['checkout', '10', '2', '0', '01', '4294967294', '4294967295', '-1', '1.5', 'ünïcödé "quoted" \\ flag', '__proto__', 'constructor', '</script>'];

function definitions(): FlagDefinition[] {
  return KEYS.map((key, i) => ({
    id: i + 1,
    key,
    active: i !== 3,
    version: i % 3 === 0 ? undefined : i,
    filters:
      i % 4 === 0
        ? {
            groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }, { rollout_percentage: 50 }],
            multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] },
            payloads: { test: '{"copy":"B"}', control: { nested: ['object', 1] } },
          }
        : { groups: [{ rollout_percentage: 60 }], payloads: i % 2 ? { true: 'plain text payload' } : {} },
  }));
}

const evaluateAll = (flags: FlagDefinition[], distinctId: string, plan: string): Pair[] =>
  flags.map((flag) => ({ flag, result: evaluateFlag(flag, { distinctId, personProperties: { plan }, groups: {}, groupProperties: {}, groupTypeMapping: {}, now: new Date() }) }));

const evaluated = (pairs: Pair[]): Evaluated => ({ flags: pairs.map((p) => p.flag), results: pairs.map((p) => p.result) });

describe('flag answers joined from remembered members', () => {
  const flags = definitions();

  it('are byte for byte what JSON.stringify makes of the /flags shape, array-index keys first as objects order them', () => {
    for (let i = 0; i < 200; i++) {
      const results = evaluateAll(flags, `user-${i}`, i % 3 ? 'pro' : 'free');
      const errors = i % 5 === 0;
      expect(flagsResponse(evaluated(results), flagsAnswer(errors, `request-${i}`)).toString()).toBe(JSON.stringify(flagsShape(results, errors, `request-${i}`)));
    }
  });

  it('are byte for byte what JSON.stringify makes of the /decide shape, for every version', () => {
    for (let i = 0; i < 200; i++) {
      const results = evaluateAll(flags, `user-${i}`, i % 3 ? 'pro' : 'free');
      for (const version of [1, 2, 3, 4, Number.NaN]) expect(decideResponse(evaluated(results), i % 7 === 0, version).toString()).toBe(JSON.stringify(decideShape(results, i % 7 === 0, version)));
    }
  });

  it('stay intact while later answers are made, cut from the same memory or not', () => {
    const first = flagsResponse(evaluated(evaluateAll(flags, 'user-first', 'pro')), flagsAnswer(false, 'first'));
    const text = first.toString();
    // Enough answers to fill several slabs.
    for (let i = 0; i < 2_000; i++) decideResponse(evaluated(evaluateAll(flags, `user-${i}`, 'free')), false, 3);
    expect(first.toString()).toBe(text);
  });

  it('put array-index keys first when they are all there is, or when the first other member is left out', () => {
    const keyed = (keys: string[], enabled: boolean[]) =>
      keys.map((key, i): FlagDefinition => ({ id: i + 1, key, active: true, filters: { groups: [{ rollout_percentage: enabled[i] ? 100 : 0 }] } }));
    const cases = [
      keyed(['10', '2', '0'], [true, true, false]),
      // Under v2 the first plain member is disabled, so left out, and the next one opens the object after the indexed ones.
      keyed(['plain-off', '7', 'plain-on', '3'], [false, true, true, true]),
      keyed(['plain-off', 'plain-on'], [false, true]),
    ];
    for (const flags of cases) {
      const pairs = evaluateAll(flags, 'user', 'free');
      for (const version of [1, 2, 3]) expect(decideResponse(evaluated(pairs), false, version).toString()).toBe(JSON.stringify(decideShape(pairs, false, version)));
      expect(flagsResponse(evaluated(pairs), flagsAnswer(false, 'r')).toString()).toBe(JSON.stringify(flagsShape(pairs, false, 'r')));
    }
  });

  it('never carry into an answer what an answer that threw left half-built', () => {
    const pairs = evaluateAll(flags, 'user-throw', 'pro');
    // A definition JSON cannot write (a BigInt id) throws while its member is made, after others were added.
    const broken = { ...pairs[1]!, flag: { ...pairs[1]!.flag, id: 10n as unknown as number, key: 'broken-flag' } };
    broken.result = evaluateFlag(broken.flag, { distinctId: 'user-throw', personProperties: {}, groups: {}, groupProperties: {}, groupTypeMapping: {}, now: new Date() });
    expect(() => flagsResponse(evaluated([pairs[0]!, broken]), flagsAnswer(false, 'first'))).toThrow();
    const next = evaluateAll(flags, 'user-next', 'free');
    expect(flagsResponse(evaluated(next), flagsAnswer(false, 'next')).toString()).toBe(JSON.stringify(flagsShape(next, false, 'next')));
    expect(decideResponse(evaluated(next), false, 3).toString()).toBe(JSON.stringify(decideShape(next, false, 3)));
  });

  it('answer empty objects for a project without flags', () => {
    expect(JSON.parse(flagsResponse(evaluated([]), flagsAnswer(false, 'r')).toString())).toEqual({ flags: {}, errorsWhileComputingFlags: false, requestId: 'r', evaluatedAt: EVALUATED_AT });
    expect(JSON.parse(decideResponse(evaluated([]), true, 3).toString())).toMatchObject({ featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: true });
  });
});

describe('/flags?v=2 as PostHog answers it', () => {
  const [flag] = definitions();
  const pairs = evaluateAll([flag!], 'user-v2', 'pro');

  it('carries evaluatedAt in epoch milliseconds, a null metadata.description, and no quotaLimited, as no quota limits a Tributary project', () => {
    const answer = JSON.parse(flagsResponse(evaluated(pairs), flagsAnswer(false, 'r')).toString()) as Record<string, unknown> & { flags: Record<string, { metadata: Record<string, unknown> }> };
    expect(answer.evaluatedAt).toBe(EVALUATED_AT);
    expect(answer.flags[flag!.key]!.metadata).toHaveProperty('description', null);
    expect(answer).not.toHaveProperty('quotaLimited');
  });

  it('adds, with config=true, the remote config of /array/:token/config and the fixed decide fields at the top level', () => {
    const config = remoteConfigMembers('phc_config_token', true, false);
    const answer = JSON.parse(flagsResponse(evaluated(pairs), { ...flagsAnswer(false, 'r'), config }).toString()) as Record<string, unknown>;
    expect(answer).toMatchObject({ ...remoteConfig('phc_config_token', true), config: { enable_collect_everything: true }, toolbarParams: {}, isAuthenticated: false, requestId: 'r' });
    expect(answer).toHaveProperty('sessionRecording', false);
    expect(answer).toHaveProperty('supportedCompression', ['gzip', 'gzip-js']);
    expect(JSON.parse(flagsResponse(evaluated([]), { ...flagsAnswer(false, 'r'), config: remoteConfigMembers('phc_config_token', false, false) }).toString())).toHaveProperty('hasFeatureFlags', false);
    expect(remoteConfigMembers('phc_config_token', true, false)).toBe(config);
  });
});

describe("decide's fixed fields", () => {
  it('are what PostHog answers a request made with a project token, in every version: collect everything on, no toolbar, not authenticated', () => {
    const pairs = evaluateAll(definitions(), 'user-fixed', 'pro');
    for (const version of [1, 2, 3, 4]) {
      for (const errors of [false, true]) {
        expect(JSON.parse(decideResponse(evaluated(pairs), errors, version).toString())).toMatchObject({ config: { enable_collect_everything: true }, toolbarParams: {}, isAuthenticated: false });
      }
    }
  });
});
