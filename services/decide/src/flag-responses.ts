import type { FlagDefinition, FlagResult } from '@tributary/flags';

export interface Evaluated {
  flag: FlagDefinition;
  result: FlagResult;
}

/** PostHog's payload field: the stored string as it is, anything else as JSON text. */
export const payloadText = (payload: unknown) => (payload === null || payload === undefined ? null : typeof payload === 'string' ? payload : JSON.stringify(payload));

/**
 * What one flag serialises to, remembered per definition. A result is a pure function of the
 * definition and its outcome (enabled, reason code and condition index, variant), and a project
 * has few outcomes per flag, so each distinct JSON text is made once; the requests that follow
 * only join texts.
 * Serialising 50 flags' objects was the largest cost of a request that reads its person from
 * Redis. Definitions are replaced, never changed, when a flag changes, so a memo never goes stale.
 */
interface FlagTexts {
  /** JSON of the key, with its colon. */
  member: string;
  /** Where `Object.fromEntries` would put the key: array indices come first, in numeric order. */
  index: number | null;
  /** `/flags` entries by outcome: enabled, then reason code, condition index and variant (maps, so no key is built per request). */
  flags: [OutcomeTexts, OutcomeTexts];
  /** A `/decide` payload entry by variant. */
  payloads: Map<string | null, string>;
}

type OutcomeTexts = Map<string, Map<number | null, Map<string | null, string>>>;

const memo = new WeakMap<FlagDefinition, FlagTexts>();
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

function textsOf(flag: FlagDefinition): FlagTexts {
  let texts = memo.get(flag);
  if (!texts) {
    const index = ARRAY_INDEX.test(flag.key) && Number(flag.key) < 2 ** 32 - 1 ? Number(flag.key) : null;
    texts = { member: `${JSON.stringify(flag.key)}:`, index, flags: [new Map(), new Map()], payloads: new Map() };
    memo.set(flag, texts);
  }
  return texts;
}

/** The members of a JSON object, in the order `JSON.stringify(Object.fromEntries(...))` gives them. */
function object(members: { index: number | null; text: string }[]): string {
  if (members.some((m) => m.index !== null)) {
    const indexed = members.filter((m) => m.index !== null).sort((a, b) => a.index! - b.index!);
    members = [...indexed, ...members.filter((m) => m.index === null)];
  }
  return `{${members.map((m) => m.text).join(',')}}`;
}

/** The value at `key` in `map`, made by `make` the first time. */
function memoised<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

function flagsEntry({ flag, result }: Evaluated): { index: number | null; text: string } {
  const texts = textsOf(flag);
  // The description goes with the reason code and condition index, and the payload with the variant.
  const byIndex = memoised(texts.flags[result.enabled ? 1 : 0], result.reason.code, () => new Map());
  const byVariant = memoised(byIndex, result.reason.condition_index, () => new Map());
  const text = memoised(byVariant, result.variant, () => {
    const value = {
      key: flag.key,
      enabled: result.enabled,
      variant: result.variant,
      reason: result.reason,
      metadata: { id: flag.id, version: flag.version ?? 1, payload: payloadText(result.payload) ?? undefined },
    };
    return texts.member + JSON.stringify(value);
  });
  return { index: texts.index, text };
}

/** `/flags` (v2): every flag with its reason and metadata. */
export function flagsResponse(results: readonly Evaluated[], errors: boolean, requestId: string): string {
  return `{"flags":${object(results.map(flagsEntry))},"errorsWhileComputingFlags":${errors},"requestId":${JSON.stringify(requestId)}}`;
}

const decideCommon = (errors: boolean) =>
  `{"config":{"enable_collect_everything":true},"toolbarParams":{},"isAuthenticated":false,"supportedCompression":["gzip","gzip-js","lz64"],"errorsWhileComputingFlags":${errors}`;

/**
 * `/decide`: v1 lists the enabled flags' keys; v2 maps enabled flags to true or their variant;
 * v3 (and any other version) maps every flag, disabled ones to false. Payloads from v2 on.
 */
export function decideResponse(results: readonly Evaluated[], errors: boolean, version: number): string {
  if (version <= 1) return `${decideCommon(errors)},"featureFlags":${JSON.stringify(results.filter(({ result }) => result.enabled).map(({ flag }) => flag.key))}}`;
  const shown = version === 2 ? results.filter(({ result }) => result.enabled) : results;
  const featureFlags = shown.map(({ flag, result }) => {
    const texts = textsOf(flag);
    return { index: texts.index, text: texts.member + (result.enabled ? JSON.stringify(result.variant ?? true) : 'false') };
  });
  const payloads = results
    .filter(({ result }) => result.payload !== null)
    .map(({ flag, result }) => {
      const texts = textsOf(flag);
      return { index: texts.index, text: memoised(texts.payloads, result.variant, () => texts.member + JSON.stringify(payloadText(result.payload))) };
    });
  return `${decideCommon(errors)},"featureFlags":${object(featureFlags)},"featureFlagPayloads":${object(payloads)}}`;
}
