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

/**
 * A JSON object of `members` (each `"key":value`), in the order `JSON.stringify(Object.fromEntries(...))`
 * gives: keys that are array indices first, in numeric order, then the others as they come.
 */
function object(results: readonly Evaluated[], member: (evaluated: Evaluated, texts: FlagTexts) => string): string {
  const members: string[] = [];
  let indexed: { index: number; text: string }[] | null = null;
  for (const evaluated of results) {
    const texts = textsOf(evaluated.flag);
    const text = member(evaluated, texts);
    if (texts.index === null) members.push(text);
    else (indexed ??= []).push({ index: texts.index, text });
  }
  if (indexed) members.unshift(...indexed.sort((a, b) => a.index - b.index).map((m) => m.text));
  return `{${members.join(',')}}`;
}

function flagsEntry({ flag, result }: Evaluated, texts: FlagTexts): string {
  // The description goes with the reason code and condition index, and the payload with the variant.
  const byCode = texts.flags[result.enabled ? 1 : 0];
  let byIndex = byCode.get(result.reason.code);
  if (!byIndex) byCode.set(result.reason.code, (byIndex = new Map()));
  let byVariant = byIndex.get(result.reason.condition_index);
  if (!byVariant) byIndex.set(result.reason.condition_index, (byVariant = new Map()));
  let text = byVariant.get(result.variant);
  if (text === undefined) {
    const value = {
      key: flag.key,
      enabled: result.enabled,
      variant: result.variant,
      reason: result.reason,
      metadata: { id: flag.id, version: flag.version ?? 1, payload: payloadText(result.payload) ?? undefined },
    };
    text = texts.member + JSON.stringify(value);
    byVariant.set(result.variant, text);
  }
  return text;
}

/** `/flags` (v2): every flag with its reason and metadata. */
export function flagsResponse(results: readonly Evaluated[], errors: boolean, requestId: string): string {
  return `{"flags":${object(results, flagsEntry)},"errorsWhileComputingFlags":${errors},"requestId":${JSON.stringify(requestId)}}`;
}

const featureFlagEntry = ({ result }: Evaluated, texts: FlagTexts) => texts.member + (result.enabled ? JSON.stringify(result.variant ?? true) : 'false');

function payloadEntry({ result }: Evaluated, texts: FlagTexts): string {
  let text = texts.payloads.get(result.variant);
  if (text === undefined) {
    text = texts.member + JSON.stringify(payloadText(result.payload));
    texts.payloads.set(result.variant, text);
  }
  return text;
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
  const payloads = results.filter(({ result }) => result.payload !== null);
  return `${decideCommon(errors)},"featureFlags":${object(shown, featureFlagEntry)},"featureFlagPayloads":${object(payloads, payloadEntry)}}`;
}
