import type { FlagDefinition, FlagResult } from '@tributary/flags';

export interface Evaluated {
  flag: FlagDefinition;
  result: FlagResult;
}

/** PostHog's payload field: the stored string as it is, anything else as JSON text. */
export const payloadText = (payload: unknown) => (payload === null || payload === undefined ? null : typeof payload === 'string' ? payload : JSON.stringify(payload));

/**
 * What one flag serialises to, remembered per definition as UTF-8 bytes. A result is a pure
 * function of the definition and its outcome (enabled, reason code and condition index,
 * variant), and a project has few outcomes per flag, so each distinct member of an answer is
 * serialised and encoded once; the requests that follow copy bytes. Serialising 50 flags'
 * objects was the largest cost of a request in the profile. Definitions are replaced, never
 * changed, when a flag changes, so a memo never goes stale.
 */
interface FlagMembers {
  /** JSON of the key, with its colon. */
  key: string;
  /** Where `Object.fromEntries` would put the key: array indices come first, in numeric order. */
  index: number | null;
  /** `/flags` members by outcome: enabled, then reason code, condition index and variant (maps, so no key is built per request). */
  flags: [Map<string, Map<number | null, Map<string | null, Buffer>>>, Map<string, Map<number | null, Map<string | null, Buffer>>>];
  /** `/decide` featureFlags members: disabled, and enabled by variant. */
  disabled: Buffer;
  enabled: Map<string | null, Buffer>;
  /** `/decide` featureFlagPayloads members by variant. */
  payloads: Map<string | null, Buffer>;
}

const memo = new WeakMap<FlagDefinition, FlagMembers>();
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

function membersOf(flag: FlagDefinition): FlagMembers {
  let members = memo.get(flag);
  if (!members) {
    const key = `${JSON.stringify(flag.key)}:`;
    const index = ARRAY_INDEX.test(flag.key) && Number(flag.key) < 2 ** 32 - 1 ? Number(flag.key) : null;
    members = { key, index, flags: [new Map(), new Map()], disabled: Buffer.from(`${key}false`), enabled: new Map(), payloads: new Map() };
    memo.set(flag, members);
  }
  return members;
}

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from('}');

/**
 * Appends a JSON object of one member per result to `out`, in the order
 * `JSON.stringify(Object.fromEntries(...))` gives: keys that are array indices first, in numeric
 * order, then the others as they come.
 */
function appendObject(out: Buffer[], results: readonly Evaluated[], member: (evaluated: Evaluated, members: FlagMembers) => Buffer): void {
  const plain: Buffer[] = [];
  let indexed: { index: number; bytes: Buffer }[] | null = null;
  for (const evaluated of results) {
    const members = membersOf(evaluated.flag);
    const bytes = member(evaluated, members);
    if (members.index === null) plain.push(bytes);
    else (indexed ??= []).push({ index: members.index, bytes });
  }
  const all = indexed ? [...indexed.sort((a, b) => a.index - b.index).map((m) => m.bytes), ...plain] : plain;
  out.push(OPEN);
  for (let i = 0; i < all.length; i++) {
    if (i > 0) out.push(COMMA);
    out.push(all[i]!);
  }
  out.push(CLOSE);
}

function flagsMember({ flag, result }: Evaluated, members: FlagMembers): Buffer {
  // The description goes with the reason code and condition index, and the payload with the variant.
  const byCode = members.flags[result.enabled ? 1 : 0];
  let byIndex = byCode.get(result.reason.code);
  if (!byIndex) byCode.set(result.reason.code, (byIndex = new Map()));
  let byVariant = byIndex.get(result.reason.condition_index);
  if (!byVariant) byIndex.set(result.reason.condition_index, (byVariant = new Map()));
  let bytes = byVariant.get(result.variant);
  if (bytes === undefined) {
    const value = {
      key: flag.key,
      enabled: result.enabled,
      variant: result.variant,
      reason: result.reason,
      metadata: { id: flag.id, version: flag.version ?? 1, payload: payloadText(result.payload) ?? undefined },
    };
    bytes = Buffer.from(members.key + JSON.stringify(value));
    byVariant.set(result.variant, bytes);
  }
  return bytes;
}

/** `/flags` (v2): every flag with its reason and metadata. */
export function flagsResponse(results: readonly Evaluated[], errors: boolean, requestId: string): Buffer {
  const out: Buffer[] = [Buffer.from('{"flags":')];
  appendObject(out, results, flagsMember);
  out.push(Buffer.from(`,"errorsWhileComputingFlags":${errors},"requestId":${JSON.stringify(requestId)}}`));
  return Buffer.concat(out);
}

function featureFlagMember({ result }: Evaluated, members: FlagMembers): Buffer {
  if (!result.enabled) return members.disabled;
  let bytes = members.enabled.get(result.variant);
  if (bytes === undefined) {
    bytes = Buffer.from(members.key + JSON.stringify(result.variant ?? true));
    members.enabled.set(result.variant, bytes);
  }
  return bytes;
}

function payloadMember({ result }: Evaluated, members: FlagMembers): Buffer {
  let bytes = members.payloads.get(result.variant);
  if (bytes === undefined) {
    bytes = Buffer.from(members.key + JSON.stringify(payloadText(result.payload)));
    members.payloads.set(result.variant, bytes);
  }
  return bytes;
}

const decideCommon = (errors: boolean) =>
  `{"config":{"enable_collect_everything":true},"toolbarParams":{},"isAuthenticated":false,"supportedCompression":["gzip","gzip-js","lz64"],"errorsWhileComputingFlags":${errors}`;

/**
 * `/decide`: v1 lists the enabled flags' keys; v2 maps enabled flags to true or their variant;
 * v3 (and any other version) maps every flag, disabled ones to false. Payloads from v2 on.
 */
export function decideResponse(results: readonly Evaluated[], errors: boolean, version: number): Buffer {
  if (version <= 1) return Buffer.from(`${decideCommon(errors)},"featureFlags":${JSON.stringify(results.filter(({ result }) => result.enabled).map(({ flag }) => flag.key))}}`);
  const out: Buffer[] = [Buffer.from(`${decideCommon(errors)},"featureFlags":`)];
  appendObject(out, version === 2 ? results.filter(({ result }) => result.enabled) : results, featureFlagMember);
  out.push(Buffer.from(',"featureFlagPayloads":'));
  appendObject(out, results.filter(({ result }) => result.payload !== null), payloadMember);
  out.push(CLOSE);
  return Buffer.concat(out);
}
