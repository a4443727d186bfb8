import type { FlagDefinition, FlagResult } from '@tributary/flags';
import { LRUCache } from 'lru-cache';
import { remoteConfig } from './sdk-config-routes.js';

/** A request's answers: `results[i]` is the result of `flags[i]`. Two lists, not a pair per flag, as every request makes one per flag. */
export interface Evaluated {
  flags: FlagDefinition[];
  results: FlagResult[];
}

/** PostHog's payload field: the stored string as it is, anything else as JSON text. */
export const payloadText = (payload: unknown) => (payload === null || payload === undefined ? null : typeof payload === 'string' ? payload : JSON.stringify(payload));

/**
 * What one result serialises to, as UTF-8 bytes. The flag engine returns one shared, frozen
 * object per outcome of a definition (see FlagResult), and a project has few outcomes per flag,
 * so each member of an answer is serialised and encoded once and kept beside its result; the
 * requests that follow copy bytes. Serialising 50 flags' objects was the largest cost of a
 * request in the profile, and finding the bytes by outcome through nested maps the next one.
 */
interface ResultJson {
  /** Where `Object.fromEntries` would put the key: array indices come first, in numeric order. */
  index: number | null;
  // Each member is kept after a comma, as most follow another: one part to copy, not two.
  /** `/flags` member: the result with its reason and metadata. */
  flag: Buffer;
  /** `/decide` featureFlags member: false, true or the variant. */
  value: Buffer;
  /** `/decide` featureFlagPayloads member. */
  payload: Buffer;
}

const memo = new WeakMap<FlagResult, ResultJson>();
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

function jsonOf(flag: FlagDefinition, result: FlagResult): ResultJson {
  let json = memo.get(result);
  if (json === undefined) {
    const key = `${JSON.stringify(flag.key)}:`;
    const value = {
      key: flag.key,
      enabled: result.enabled,
      variant: result.variant,
      reason: result.reason,
      // PostHog's flags service answers no description (its metadata.description is always null).
      metadata: { id: flag.id, version: flag.version ?? 1, description: null, payload: payloadText(result.payload) ?? undefined },
    };
    json = {
      index: ARRAY_INDEX.test(flag.key) && Number(flag.key) < 2 ** 32 - 1 ? Number(flag.key) : null,
      flag: Buffer.from(`,${key}${JSON.stringify(value)}`),
      value: Buffer.from(`,${key}${JSON.stringify(result.enabled ? (result.variant ?? true) : false)}`),
      payload: Buffer.from(`,${key}${JSON.stringify(payloadText(result.payload))}`),
    };
    memo.set(result, json);
  }
  return json;
}

const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');

type Member = 'flag' | 'value' | 'payload';
type Include = (result: FlagResult) => boolean;

const all: Include = () => true;
const enabled: Include = (result) => result.enabled;
const withPayload: Include = (result) => result.payload !== null;

/** The parts of the answer being built: answers are built one at a time, synchronously. */
const parts: Buffer[] = [];
let partsLength = 0;

/** Starts an answer; what an answer that threw half-way left behind is dropped, never sent. */
function begin(first: Buffer): void {
  parts.length = 0;
  partsLength = 0;
  append(first);
}

function append(bytes: Buffer): void {
  parts.push(bytes);
  partsLength += bytes.length;
}

/** Where answers are cut from: one allocation per many answers, rather than one each. */
const SLAB_BYTES = 256 * 1024;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabUsed = 0;

/**
 * The parts joined into one buffer, cut from the slab when the answer fits. An answer of 10 kB
 * (50 flags) was a fresh ArrayBuffer each, and Buffer.concat makes a view per part it copies:
 * both showed in the profile, beside the copying itself. A slab lives while any answer cut
 * from it is still being written: a client slow to read its answer holds a slab, not 10 kB.
 */
function finish(): Buffer {
  let out: Buffer;
  if (partsLength > SLAB_BYTES / 8) {
    out = Buffer.allocUnsafeSlow(partsLength);
  } else {
    if (slabUsed + partsLength > SLAB_BYTES) {
      slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      slabUsed = 0;
    }
    out = slab.subarray(slabUsed, slabUsed + partsLength);
    // Eight-byte aligned, as Node's own pool keeps its slices.
    slabUsed = (slabUsed + partsLength + 7) & ~7;
  }
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Appends a JSON object with one member per included result, in the order
 * `JSON.stringify(Object.fromEntries(...))` gives: keys that are array indices first, in numeric
 * order, then the others as they come.
 */
function appendObject({ flags, results }: Evaluated, member: Member, include: Include): void {
  let indexed: { index: number; bytes: Buffer }[] | null = null;
  append(OPEN);
  const start = parts.length;
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!;
    if (!include(result)) continue;
    const json = jsonOf(flags[i]!, result);
    if (json.index === null) append(json[member]);
    else (indexed ??= []).push({ index: json.index, bytes: json[member] });
  }
  if (indexed !== null) {
    // Rare (a flag keyed like "7"): the members appended so far go behind the indexed ones.
    const plain = parts.splice(start);
    for (const part of plain) partsLength -= part.length;
    for (const { bytes } of indexed.sort((a, b) => a.index - b.index)) append(bytes);
    for (const part of plain) append(part);
  }
  // Every member is kept after a comma: the object's first goes without it.
  if (parts.length > start) {
    parts[start] = parts[start]!.subarray(1);
    partsLength -= 1;
  }
  append(CLOSE);
}

const FLAGS_OPEN = Buffer.from('{"flags":');

/**
 * What PostHog's decide answers every SDK alike: the toolbar and `isAuthenticated` are for the
 * browser session of someone logged in to PostHog itself, which a request made with a project
 * token never is, and collect-everything is on whatever the project's autocapture setting.
 */
const FIXED_FIELDS = '"config":{"enable_collect_everything":true},"toolbarParams":{},"isAuthenticated":false';

/** Remote-config members by token, for each of with and without flags and surveys: each is serialised once, not per request. */
const configMembers = [0, 1, 2, 3].map(() => new LRUCache<string, Buffer>({ max: 10_000 }));

/**
 * The members `/flags?config=true` adds, after a comma: the remote config posthog-js would
 * otherwise load from `/array/:token/config` (PostHog reads both from one cached config), and
 * the fixed fields `/decide` answers.
 */
export function remoteConfigMembers(token: string, hasFeatureFlags: boolean, surveys: boolean): Buffer {
  const memo = configMembers[(hasFeatureFlags ? 1 : 0) + (surveys ? 2 : 0)]!;
  let members = memo.get(token);
  if (members === undefined) {
    members = Buffer.from(`,${FIXED_FIELDS},${JSON.stringify(remoteConfig(token, hasFeatureFlags, surveys)).slice(1, -1)}`);
    memo.set(token, members);
  }
  return members;
}

export interface FlagsAnswer {
  errors: boolean;
  requestId: string;
  /** When the flags were evaluated, in milliseconds since the epoch. */
  evaluatedAt: number;
  /** From `remoteConfigMembers`, when the request asked for the config. */
  config: Buffer | null;
}

/**
 * `/flags` (v2): every flag with its reason and metadata. `quotaLimited` is left out, as PostHog
 * leaves it out of an answer that no quota limited; Tributary has no quotas.
 */
export function flagsResponse(evaluated: Evaluated, { errors, requestId, evaluatedAt, config }: FlagsAnswer): Buffer {
  begin(FLAGS_OPEN);
  appendObject(evaluated, 'flag', all);
  append(Buffer.from(`,"errorsWhileComputingFlags":${errors},"requestId":${JSON.stringify(requestId)},"evaluatedAt":${evaluatedAt}`));
  if (config !== null) append(config);
  append(CLOSE);
  return finish();
}

const decideCommon = (errors: boolean) => `{${FIXED_FIELDS},"supportedCompression":["gzip","gzip-js","lz64"],"errorsWhileComputingFlags":${errors}`;
const DECIDE_OPEN = [false, true].map((errors) => Buffer.from(`${decideCommon(errors)},"featureFlags":`));
const PAYLOADS = Buffer.from(',"featureFlagPayloads":');

/**
 * `/decide`: v1 lists the enabled flags' keys; v2 maps enabled flags to true or their variant;
 * v3 (and any other version) maps every flag, disabled ones to false. Payloads from v2 on.
 */
export function decideResponse(evaluated: Evaluated, errors: boolean, version: number): Buffer {
  if (version <= 1) return Buffer.from(`${decideCommon(errors)},"featureFlags":${JSON.stringify(evaluated.results.filter(enabled).map((result) => result.key))}}`);
  begin(DECIDE_OPEN[errors ? 1 : 0]!);
  appendObject(evaluated, 'value', version === 2 ? enabled : all);
  append(PAYLOADS);
  appendObject(evaluated, 'payload', withPayload);
  append(CLOSE);
  return finish();
}
