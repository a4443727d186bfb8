/**
 * Hostile requests for one operation: every family below is attacked systematically (each path
 * parameter with every bad id, each query parameter and body field with wrong types, every
 * content type and encoding, every other method), then fast-check draws seeded random mutations
 * until the operation's share of the run is spent. The same seed gives the same requests.
 */
import { gzipSync, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import LZString from 'lz-string';
import { PROPERTY_FILTER_TYPES } from '@tributary/property-filters';
import { METHODS, routeKey, type Operation } from './routes.js';
import {
  BAD_DATES,
  BAD_IDS,
  INJECTIONS,
  WRONG_TYPES,
  deepJson,
  everyOperatorFilters,
  hostileText,
  hostileValue,
  hugeArray,
  manyMembers,
  propertyFilterArb,
  tenMegabyteString,
  toJson,
  withRawField,
} from './values.js';

/** Resources the run created, so path parameters can name real ones as well as bad ones. */
export interface Fixtures {
  projectId: number;
  projectApiKey: string;
  flagId?: number;
  cohortId?: number;
  dashboardId?: number;
  personId?: number;
  /** A personal API key made to be attacked (deleted, even), never one the run authenticates with. */
  victimKeyId?: string;
  userUuid?: string;
  organizationId?: string;
}

/** How the sender authenticates a case: with a rotating personal key, none, a wrong one, or the project key. */
export type Auth = 'key' | 'none' | 'bad' | 'project';

export interface HostileCase {
  /** Family and detail, enough to reproduce by hand. */
  name: string;
  route: string;
  method: string;
  /** Path and query as sent on the wire (already encoded, possibly badly on purpose). */
  path: string;
  headers: Record<string, string>;
  /** The body, or its parts: a 10 MB part is shared by every case that sends it, never copied. */
  body?: Buffer | readonly Buffer[];
  auth: Auth;
  /** Destroys a fixture the other cases name: sent after everything else. */
  last?: boolean;
}

const JSON_TYPE = { 'content-type': 'application/json' };
/** Stands where a deeply nested value is spliced into a body's text. */
const DEEP = '\u0001deep\u0001';

/** The real value of a path parameter, by the resource it names. */
function realParam(op: Operation, param: string, fx: Fixtures): string | undefined {
  if (param === 'project_id') return String(fx.projectId);
  if (param === 'token') return fx.projectApiKey;
  if (param === 'user_uuid') return fx.userUuid;
  if (param === 'organization_id') return fx.organizationId ?? '@current';
  const before = op.template.split('/').at(op.template.split('/').indexOf(`{${param}}`) - 1);
  const byResource: Record<string, string | number | undefined> = {
    feature_flags: fx.flagId,
    cohorts: fx.cohortId,
    dashboards: fx.dashboardId,
    persons: fx.personId,
    personal_api_keys: fx.victimKeyId,
    projects: fx.projectId,
  };
  const value = before === undefined ? undefined : byResource[before];
  return value === undefined ? undefined : String(value);
}

/** Percent-encoding that also takes a lone surrogate, as the bytes WTF-8 gives it (invalid UTF-8 on the wire). */
export function encodeLoose(text: string): string {
  return text.replace(/[\ud800-\udbff][\udc00-\udfff]|[^A-Za-z0-9\-_.!~*'()]/g, (c) => {
    if (c.length === 2 || c.charCodeAt(0) < 0xd800 || c.charCodeAt(0) > 0xdfff) return encodeURIComponent(c);
    const unit = c.charCodeAt(0);
    return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  });
}

/** A path segment as the wire carries it: catalogue ids keep their deliberate escapes, blanks and the rest are encoded. */
const wireSegment = (raw: string) => raw.replace(/[ \u0000-\u001f\u007f-\uffff]/g, (c) => encodeLoose(c));

function fillPath(op: Operation, fx: Fixtures, override?: { param: string; raw: string }): string {
  return op.template.replace(/\{(\w+)\}/g, (_m, param: string) => {
    if (override?.param === param) return wireSegment(override.raw);
    return encodeURIComponent(realParam(op, param, fx) ?? '1');
  });
}

/** `count` entries of `list`, chosen and ordered by the seed. */
export function pickSeeded<T>(list: readonly T[], count: number, seed: number): T[] {
  if (count >= list.length) return [...list];
  return fc.sample(fc.shuffledSubarray([...list], { minLength: count, maxLength: count }), { seed, numRuns: 1 })[0]!;
}

const queryString = (pairs: [string, string][]) => (pairs.length === 0 ? '' : `?${new URLSearchParams(pairs).toString()}`);

/** What a caller who means well sends to this operation: the baseline each mutation spoils one part of. */
export function goodBody(op: Operation, fx: Fixtures): Record<string, unknown> | undefined {
  const t = op.template;
  const event = { event: 'hostile', distinct_id: 'hostile-user', properties: { plan: 'pro', $current_url: 'https://example.test/' } };
  if (/^\/batch\/$/.test(t)) return { api_key: fx.projectApiKey, batch: [{ event: 'hostile', properties: { distinct_id: 'hostile-user' } }] };
  if (/^\/(capture|e|i\/v0\/e|track|engage|s)\/$/.test(t)) return { api_key: fx.projectApiKey, ...event };
  if (/^\/(decide|flags)\/$/.test(t)) {
    return { api_key: fx.projectApiKey, distinct_id: 'hostile-user', groups: { company: 'acme' }, person_properties: { email: 'a@example.test' }, group_properties: { company: { name: 'Acme' } } };
  }
  if (op.method === 'GET' || op.method === 'DELETE') return undefined;
  const flagFilters = { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: 'example' }], rollout_percentage: 50 }] };
  if (/\/feature_flags\/$/.test(t)) return { key: 'hostile-flag', name: 'hostile', filters: flagFilters, active: true };
  if (/\/feature_flags\/\{id\}\/$/.test(t)) return { name: 'hostile', filters: flagFilters, active: false };
  if (/\/access_controls\/$/.test(t)) return { access_level: 'viewer', organization_member: null };
  if (/create_from_template_json\/$/.test(t)) return { name: 'hostile', template: { template_name: 'hostile', tiles: [{ name: 'tile', query: { kind: 'TrendsQuery' }, layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } } }] } };
  if (/\/dashboards\/\{id\}\/$/.test(t)) return { name: 'hostile', tags: ['a'], restriction_level: 21, pinned: true };
  if (/\/explicit_members\/$/.test(t)) return { user_uuid: fx.userUuid ?? '00000000-0000-0000-0000-000000000000', level: 1 };
  if (/\/explicit_members\/\{user_uuid\}\/$/.test(t)) return { level: 8 };
  const cohortFilters = { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value: 'example' }] }] } };
  if (/\/cohorts\/$/.test(t)) return { name: 'hostile', filters: cohortFilters };
  if (/\/cohorts\/\{id\}\/$/.test(t)) return { name: 'hostile', filters: cohortFilters };
  if (/\/persons\/\{id\}\/$/.test(t)) return { properties: { plan: 'hostile' } };
  if (/\/update_property\/$/.test(t)) return { key: 'plan', value: 'hostile' };
  if (/\/delete_property\/$/.test(t)) return { $unset: 'plan' };
  if (/\/split\/$/.test(t)) return { main_distinct_id: 'hostile-user' };
  if (/\/bulk_delete\/$/.test(t)) return { distinct_ids: ['hostile-nobody'], delete_events: false };
  if (/\/personal_api_keys\/$/.test(t)) return { label: 'hostile', scopes: ['query:read'] };
  return {};
}

/** Every path into a JSON value, for mutating one part at a time. */
function pathsOf(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (at.length > 0) out.push(at);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...at, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

function setAt(base: unknown, path: readonly (string | number)[], value: unknown, remove = false): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (remove) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = value;
  return copy;
}

const describe = (value: unknown) => {
  const text = typeof value === 'string' ? JSON.stringify(value) : (toJson(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 40)}…(${text.length})` : text;
};

/** Invalid UTF-8 in every form decoders trip on: stray continuation, overlong, surrogate, truncated. */
const INVALID_UTF8 = [Buffer.from([0xff, 0xfe]), Buffer.from([0xc0, 0x80]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xe2, 0x82]), Buffer.from([0x80])];

/** Raw bodies that are not the JSON they claim to be, built from the baseline's text. */
function brokenJsonBodies(text: string): [string, Buffer][] {
  const bytes = Buffer.from(text);
  const mid = text.indexOf(':') + 2;
  return [
    ['truncated', bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2)))],
    ['truncated-1', bytes.subarray(0, bytes.length - 1)],
    ['trailing-garbage', Buffer.from(`${text}}garbage`)],
    ['bom', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])],
    ['utf16', Buffer.from(text, 'utf16le')],
    ['nul-bytes', Buffer.concat([bytes.subarray(0, mid), Buffer.from([0, 0, 0]), bytes.subarray(mid)])],
    ...INVALID_UTF8.map((bad, i): [string, Buffer] => [`invalid-utf8-${i}`, Buffer.concat([bytes.subarray(0, mid), bad, bytes.subarray(mid)])]),
    ['single-quotes', Buffer.from(text.replaceAll('"', "'"))],
    ['comments', Buffer.from(`/* c */${text}// c`)],
    ['nan', Buffer.from('{"a": NaN, "b": Infinity, "c": -Infinity}')],
    ['big-number', Buffer.from(`{"a": ${'9'.repeat(10_000)}}`)],
    ['exponent', Buffer.from('{"a": 1e999999, "b": -1e-999999}')],
    ['duplicate-keys', Buffer.from(`${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${text.slice(1)}`)],
    ['proto', Buffer.from(`{"__proto__": {"polluted": true}, ${text.slice(1)}`)],
    ['lone-surrogate', Buffer.from(`{"\\ud800": "\\udfff", ${text.slice(1)}`)],
    ['escaped-nul', Buffer.from(`{"\\u0000": "a\\u0000b", ${text.slice(1)}`)],
    ['empty', Buffer.alloc(0)],
    ['whitespace', Buffer.from(' \n\t ')],
    ['null', Buffer.from('null')],
    ['number', Buffer.from('42')],
    ['string', Buffer.from('"x"')],
    ['array', Buffer.from('[]')],
    ['array-of-body', Buffer.from(`[${text}]`)],
    ['form', Buffer.from('a=1&b=2')],
    ['binary', Buffer.from(Array.from({ length: 256 }, (_, i) => i))],
  ];
}

/** Content types nobody routes, and JSON's with charsets body-parser cannot decode. */
const CONTENT_TYPES = [
  'text/plain',
  'text/xml',
  'application/xml',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=bogus',
  'application/json; charset=',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'application/json, text/plain',
  '*/*',
  'json',
  ';;;',
  '',
];

function encodings(text: string): [string, Record<string, string>, Buffer][] {
  const bytes = Buffer.from(text);
  const gz = gzipSync(bytes);
  return [
    ['gzip', { 'content-encoding': 'gzip' }, gz],
    ['gzip-truncated', { 'content-encoding': 'gzip' }, gz.subarray(0, Math.floor(gz.length / 2))],
    ['gzip-junk', { 'content-encoding': 'gzip' }, Buffer.from('not gzip at all')],
    ['gzip-plain-json', { 'content-encoding': 'gzip' }, bytes],
    ['gzip-of-garbage', { 'content-encoding': 'gzip' }, gzipSync(Buffer.from([0xff, 0xfe, 0x00, 0x7b]))],
    ['gzip-bomb', { 'content-encoding': 'gzip' }, compressionBombs().gzip],
    ['deflate', { 'content-encoding': 'deflate' }, deflateSync(bytes)],
    ['deflate-junk', { 'content-encoding': 'deflate' }, Buffer.from('junk')],
    ['br-junk', { 'content-encoding': 'br' }, Buffer.from('junk')],
    ['zstd', { 'content-encoding': 'zstd' }, bytes],
    ['unknown', { 'content-encoding': 'x-hostile' }, bytes],
    ['gzip-gzip', { 'content-encoding': 'gzip, gzip' }, gzipSync(gz)],
    ['identity', { 'content-encoding': 'identity' }, bytes],
  ];
}

let bombs: { gzip: Buffer; lz64: Buffer } | undefined;
/**
 * Small payloads that decompress beyond every body limit: gzip to 48 MB (past /batch/'s 20 MB);
 * lz-string, whose compressor is slow, only past the 2 MB of the other routes. Built once a run.
 */
function compressionBombs(): { gzip: Buffer; lz64: Buffer } {
  bombs ??= { gzip: gzipSync(Buffer.alloc(48 * 1024 * 1024, 0x20)), lz64: Buffer.from(LZString.compressToBase64(`"${'a'.repeat(2200 * 1024)}"`)) };
  return bombs;
}

/** Capture's and decide's payload decoding: `compression` and the form field as well as Content-Encoding. */
function compressionCases(op: Operation, text: string, pick: <T>(list: readonly T[], count: number) => T[], push: (name: string, path: string, headers: Record<string, string>, body?: Buffer) => void): void {
  const bombs = compressionBombs();
  const bytes = Buffer.from(text);
  const gz = gzipSync(bytes);
  const lz = LZString.compressToBase64(text);
  const payloads: [string, Buffer][] = [
    ['gzip', gz],
    ['gzip-truncated', gz.subarray(0, gz.length - 8)],
    ['gzip-header-only', gz.subarray(0, 10)],
    ['gzip-bad-crc', Buffer.concat([gz.subarray(0, gz.length - 8), Buffer.alloc(8, 0xff)])],
    ['gzip-bomb', bombs.gzip],
    ['gzip-not-json', gzipSync(Buffer.from('hello'))],
    ['gzip-invalid-utf8', gzipSync(Buffer.concat([Buffer.from('{"event":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]))],
    ['lz64', Buffer.from(lz)],
    ['lz64-truncated', Buffer.from(lz.slice(0, Math.floor(lz.length / 2)))],
    ['lz64-junk', Buffer.from('!!!not lz!!!')],
    ['lz64-not-json', Buffer.from(LZString.compressToBase64('hello'))],
    ['lz64-bomb', bombs.lz64],
    ['base64', Buffer.from(bytes.toString('base64'))],
    ['base64-truncated', Buffer.from(bytes.toString('base64').slice(0, 7))],
    ['base64-invalid', Buffer.from('@@@###$$$')],
    ['base64-of-gzip-truncated', Buffer.from(gz.subarray(0, 12).toString('base64'))],
    ['base64-url', Buffer.from(bytes.toString('base64url'))],
    ['plain', bytes],
    ['empty', Buffer.alloc(0)],
    ['binary', Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i))],
  ];
  const hints = ['gzip', 'gzip-js', 'lz64', 'lz-string', 'base64', 'b64', 'GZIP', 'brotli', '', 'x'.repeat(500)];
  const base = op.template;
  for (const [name, payload] of payloads) {
    for (const hint of pick(hints, 3)) {
      push(`compression=${hint.slice(0, 12)} body=${name}`, `${base}${queryString([['compression', hint]])}`, { 'content-type': 'text/plain' }, payload);
    }
    push(`content-encoding body=${name}`, base, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload);
    const form = Buffer.concat([Buffer.from('compression=lz64&data='), Buffer.from(encodeURIComponent(payload.toString('latin1')))]);
    push(`form data=${name}`, base, { 'content-type': 'application/x-www-form-urlencoded' }, form);
    if (payload.length < 4000) push(`GET ?data=${name}`, `${base}${queryString([['data', payload.toString('latin1')]])}`, {}, undefined);
  }
  push('form without data', base, { 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from('compression=gzip'));
  push('form data broken escapes', base, { 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from('data=%&data=%zz%FF'));
  push('GET ?data broken escapes', `${base}?data=%zz%&compression=%FF`, {}, undefined);
}

/** Events that capture accepts and ingest must survive: identity and group events with hostile properties. */
function ingestPoison(fx: Fixtures): [string, unknown][] {
  const token = fx.projectApiKey;
  const ev = (event: string, properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ api_key: token, event, distinct_id: 'hostile-user', properties, ...extra });
  const values = ['a\u0000b', '\ud800', '\udfff\ud800x', 'é😀', 'x'.repeat(100_000), 1e308, -0, null, [], {}, [null, { a: [] }], true];
  const out: [string, unknown][] = [];
  for (const value of values) {
    const d = describe(value);
    out.push([`$identify $set=${d}`, ev('$identify', { $set: { hostile: value, [String(typeof value === 'string' ? value.slice(0, 50) : 'k')]: value } })]);
    out.push([`$set_once=${d}`, ev('x', { $set_once: { hostile: value } })]);
    out.push([`$unset=${d}`, ev('x', { $unset: value })]);
    out.push([`distinct_id=${d}`, { api_key: token, event: 'x', distinct_id: value }]);
    out.push([`$create_alias alias=${d}`, ev('$create_alias', { alias: value })]);
    out.push([`$identify anon=${d}`, ev('$identify', { $anon_distinct_id: value })]);
    out.push([`$groupidentify type=${d}`, ev('$groupidentify', { $group_type: value, $group_key: 'k', $group_set: { a: 1 } })]);
    out.push([`$groupidentify key=${d}`, ev('$groupidentify', { $group_type: 'company', $group_key: value, $group_set: value })]);
    out.push([`$groups=${d}`, ev('x', { $groups: { company: value, [String(value).slice(0, 40)]: 'k' } })]);
    out.push([`$groups whole=${d}`, ev('x', { $groups: value })]);
    out.push([`$process_person_profile=${d}`, ev('x', { $process_person_profile: value, $set: { a: 1 } })]);
    out.push([`timestamp=${d}`, ev('x', {}, { timestamp: value })]);
    out.push([`offset=${d}`, ev('x', {}, { offset: value })]);
    out.push([`$ip=${d}`, ev('x', { $ip: value })]);
    out.push([`$geoip_disable=${d}`, ev('x', { $geoip_disable: value })]);
    out.push([`event name=${d}`, { api_key: token, event: value, distinct_id: 'hostile-user' }]);
    out.push([`property key`, ev('x', { [typeof value === 'string' ? value.slice(0, 1000) : 'k']: value })]);
  }
  for (const ts of [...BAD_DATES, '2024-01-01T00:00:00Z', 1e20, -1, 0, '1e308']) {
    out.push([`timestamp=${describe(ts)}`, ev('x', {}, { timestamp: ts, sent_at: ts })]);
    out.push([`batch sent_at=${describe(ts)}`, { api_key: token, sent_at: ts, batch: [{ event: 'x', properties: { distinct_id: 'hostile-user' }, timestamp: ts }] }]);
  }
  out.push(['merge into itself', ev('$create_alias', { alias: 'hostile-user' })]);
  out.push(['identify itself', ev('$identify', { $anon_distinct_id: 'hostile-user' })]);
  out.push(['uuid uppercase', ev('x', {}, { uuid: 'AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA' })]);
  out.push(['uuid nil', ev('x', {}, { uuid: '00000000-0000-0000-0000-000000000000' })]);
  return out;
}

/** What every case of one operation starts from. */
function baseline(op: Operation, fx: Fixtures) {
  const good = goodBody(op, fx);
  const sendsBody = good !== undefined;
  return {
    route: routeKey(op),
    auth: (op.scopes ? 'key' : 'none') as Auth,
    good,
    goodText: good === undefined ? '' : toJson(good),
    sendsBody,
    realPath: fillPath(op, fx),
    destructive: op.method === 'DELETE',
    headersFor: sendsBody ? JSON_TYPE : {},
  };
}

/**
 * The systematic hostile requests for one operation: every family, each with a seeded share of
 * its catalogue (the operations that share a handler, and runs with other seeds, get other
 * shares), and every filter operator with several values wherever filters are read.
 */
export function casesFor(op: Operation, fx: Fixtures, seed: number): HostileCase[] {
  const { route, auth, good, goodText, sendsBody, realPath, destructive, headersFor } = baseline(op, fx);
  const out: HostileCase[] = [];
  let draws = 0;
  const pick = <T>(list: readonly T[], count: number): T[] => pickSeeded(list, count, seed * 7919 + draws++);
  // Capture's extra paths and GET forms share its handler: they get a lighter share.
  const light = op.projectKey && !/^\/(capture|batch|decide|flags)\/$/.test(op.template) ? 0.5 : 1;
  const share = (count: number) => Math.max(1, Math.round(count * light));
  const push = (name: string, path: string, headers: Record<string, string>, body?: Buffer | readonly Buffer[], extra: Partial<HostileCase> = {}) => {
    const method = extra.method ?? op.method;
    out.push({ name, route, method, path, headers, ...(body ? { body } : {}), auth, ...((method === 'DELETE' || destructive) && path.startsWith(realPath) ? { last: true } : {}), ...extra });
  };
  const bodyOf = (value: unknown) => (sendsBody ? Buffer.from(toJson(value)) : undefined);

  // Path parameters: every bad id in each position, the others real.
  for (const param of op.params) {
    const ids = param === 'project_id' ? pick(BAD_IDS, 8) : pick(BAD_IDS, 20);
    for (const raw of ids) push(`path ${param}=${raw.slice(0, 30)}`, fillPath(op, fx, { param, raw }), headersFor, bodyOf(good));
    for (const text of pick(INJECTIONS.filter((s) => s.length < 200), param === 'project_id' ? 2 : 6)) push(`path ${param} injection ${describe(text)}`, fillPath(op, fx, { param, raw: text }), headersFor, bodyOf(good));
  }

  // Query parameters: wrong types and injections in each, repeats, broken escapes, one far too long.
  const intValues = ['abc', '-1', '0', '1.5', '1e309', '99999999999999999999', '0x10', ' 1', '', 'NaN', 'Infinity', '-0', '1,2', '[1]', '１'];
  for (const [name, type] of Object.entries(op.query)) {
    const values = type === 'integer' || type === 'number' ? [...intValues, ...INJECTIONS] : type === 'boolean' ? ['yes', '2', '', 'TRUE', 'null'] : INJECTIONS.filter((s) => s.length < 3000);
    for (const value of pick(values, share(8))) push(`query ${name}=${describe(value)}`, `${realPath}${queryString([[name, value]])}`, headersFor, bodyOf(good));
    push(`query ${name} repeated`, `${realPath}${queryString([[name, '1'], [name, 'x']])}`, headersFor, bodyOf(good));
    push(`query ${name}[] brackets`, `${realPath}?${encodeURIComponent(name)}[]=1&${encodeURIComponent(name)}[a]=2`, headersFor, bodyOf(good));
    push(`query ${name} broken escapes`, `${realPath}?${encodeURIComponent(name)}=%zz%FF%ED%A0%80%00%`, headersFor, bodyOf(good));
    push(`query ${name} very long`, `${realPath}${queryString([[name, 'x'.repeat(7000)]])}`, headersFor, bodyOf(good));
  }
  push('query 10 MB', `${realPath}?q=${'a'.repeat(100_000)}`, headersFor, bodyOf(good));
  push('query many parameters', `${realPath}?${Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`).join('&')}`, headersFor, bodyOf(good));

  // JSON-valued query parameters: every operator of every filter type, and HogQL injections in select and where.
  for (const name of ['properties'].filter((n) => n in op.query)) {
    for (const type of [...PROPERTY_FILTER_TYPES, undefined]) {
      for (const filter of everyOperatorFilters(type, 4, seed + draws++)) push(`query properties ${type ?? 'untyped'} ${filter.operator} ${describe(filter.value)}`, `${realPath}${queryString([[name, toJson([filter])]])}`, headersFor);
    }
    for (const bad of ['{}', '[1]', '[null]', '[[]]', '[{"key":""}]', '[{"key":{"$ne":1}}]', 'not json', '[', deepJson(3000, 'array')]) push(`query properties ${describe(bad)}`, `${realPath}${queryString([[name, bad]])}`, headersFor);
  }
  for (const name of ['select', 'where'].filter((n) => n in op.query)) {
    for (const text of pick(INJECTIONS.filter((s) => s.length < 6000), 50)) push(`query ${name} ${describe(text)}`, `${realPath}${queryString([[name, toJson([text])]])}`, headersFor);
    for (const bad of ['"x"', '{}', '[1]', '[""]', 'not json', '[[]]']) push(`query ${name} ${describe(bad)}`, `${realPath}${queryString([[name, bad]])}`, headersFor);
  }
  for (const name of ['ids', 'distinct_ids'].filter((n) => n in op.query)) {
    for (const bad of ['[1,2', '{"a":1}', '[[1]]', '[null]', 'a\u0000b', '["a\\u0000b"]', '1,2,,', `[${'1,'.repeat(500)}1]`, '[1e999]', '["\\ud800"]']) push(`query ${name}=${describe(bad)}`, `${realPath}${queryString([[name, bad]])}`, headersFor, bodyOf({}));
  }

  // Bodies: every field with every wrong type, each field missing, and the whole body broken.
  if (good !== undefined) {
    for (const path of pathsOf(good)) {
      for (const value of pick(WRONG_TYPES, share(6))) push(`body ${path.join('.')}=${describe(value)}`, realPath, JSON_TYPE, Buffer.from(toJson(setAt(good, path, value))));
      push(`body ${path.join('.')} missing`, realPath, JSON_TYPE, Buffer.from(toJson(setAt(good, path, undefined, true))));
      push(`body ${path.join('.')} deep`, realPath, JSON_TYPE, Buffer.from(toJson(setAt(good, path, DEEP)).replace(JSON.stringify(DEEP), deepJson(2000, 'object'))));
    }
    for (const [name, bytes] of pick(brokenJsonBodies(goodText), share(14))) push(`body ${name}`, realPath, JSON_TYPE, bytes);
    for (const type of pick(CONTENT_TYPES, share(6))) push(`content-type ${JSON.stringify(type)}`, realPath, type ? { 'content-type': type } : {}, Buffer.from(goodText));
    push('no content-type', realPath, {}, Buffer.from(goodText));
    for (const [name, headers, bytes] of pick(encodings(goodText), share(6))) push(`content-encoding ${name}`, realPath, { ...JSON_TYPE, ...headers }, bytes);
    // Oversized: memory must stay bounded whatever arrives.
    // The last object-valued field (properties, filters, person_properties...): where nesting reaches furthest.
    const field = Object.keys(good).filter((k) => good[k] !== null && typeof good[k] === 'object').at(-1) ?? Object.keys(good)[0] ?? 'x';
    push('body 10 MB string', realPath, JSON_TYPE, withRawField(good, field, tenMegabyteString()));
    push('body deep nesting 100k arrays', realPath, JSON_TYPE, withRawField(good, field, deepJson(100_000, 'array')));
    push('body deep nesting 20k objects', realPath, JSON_TYPE, withRawField(good, field, deepJson(20_000, 'object')));
    push('body deep nesting 3k objects', realPath, JSON_TYPE, withRawField(good, field, deepJson(3_000, 'object')));
    push('body huge array', realPath, JSON_TYPE, withRawField(good, field, hugeArray(100_000, '0')));
    push('body many keys', realPath, JSON_TYPE, [Buffer.from(`${goodText.slice(0, -1)}${goodText.length > 2 ? ',' : ''}`), Buffer.from(manyMembers(50_000)), Buffer.from('}')]);
  } else {
    push('unexpected JSON body', realPath, JSON_TYPE, Buffer.from('{"a":'));
    push('unexpected deep body', realPath, JSON_TYPE, Buffer.from(deepJson(100_000, 'array')));
    push('unexpected gzip body', realPath, { ...JSON_TYPE, 'content-encoding': 'gzip' }, Buffer.from('junk'));
  }

  // Domain families: filters with every operator wherever a body holds filters.
  if (/feature_flags\/(\{id\}\/)?$/.test(op.template) && good !== undefined) {
    for (const type of ['person', 'group', 'cohort', 'event']) {
      for (const filter of everyOperatorFilters(type, 4, seed + draws++)) {
        push(`flag filter ${type ?? 'untyped'} ${filter.operator} ${describe(filter.value)}`, realPath, JSON_TYPE, Buffer.from(toJson({ ...good, filters: { groups: [{ properties: [filter], rollout_percentage: 50 }] } })));
      }
    }
    const weird = [{ multivariate: { variants: [{ key: 'a', rollout_percentage: 1e308 }, { key: 'b', rollout_percentage: -1e308 }] } }, { multivariate: { variants: 'x' } }, { payloads: { true: deepJson(10, 'array') } }, { aggregation_group_type_index: 1e9 }, { groups: [{ rollout_percentage: 'NaN' }] }, { super_groups: [{ properties: 'x' }] }, { holdout: { exclusion_percentage: 101 } }, { groups: Array.from({ length: 5000 }, () => ({ rollout_percentage: 1 })) }];
    for (const filters of weird) push(`flag filters ${describe(filters)}`, realPath, JSON_TYPE, Buffer.from(toJson({ ...good, filters })));
  }
  if (/cohorts\/(\{id\}\/)?$/.test(op.template) && good !== undefined) {
    for (const filter of everyOperatorFilters('person', 4, seed + draws++)) push(`cohort filter ${filter.operator} ${describe(filter.value)}`, realPath, JSON_TYPE, Buffer.from(toJson({ ...good, filters: { properties: { type: 'AND', values: [filter] } } })));
    let nested: unknown = { key: 'email', value: 'x' };
    for (let depth = 0; depth < 6; depth++) {
      nested = { type: depth % 2 ? 'AND' : 'OR', values: [nested] };
      push(`cohort nesting ${depth + 1}`, realPath, JSON_TYPE, Buffer.from(toJson({ ...good, filters: { properties: nested } })));
    }
    push('cohort static huge distinct_ids', realPath, JSON_TYPE, Buffer.from(toJson({ name: 'hostile', is_static: true, distinct_ids: Array.from({ length: 60_000 }, (_, i) => `d${i}`) })));
    push('cohort static nul distinct id', realPath, JSON_TYPE, Buffer.from(toJson({ name: 'hostile', is_static: true, distinct_ids: ['a\u0000b', '\ud800'] })));
  }

  // Capture and decide: compressed, encoded and form payloads, and events ingest must survive.
  if (op.projectKey && goodText) compressionCases(op, goodText, pick, push);
  if (/^\/(capture|batch)\/$/.test(op.template) && op.method === 'POST') {
    for (const [name, value] of pick(ingestPoison(fx), op.template === '/batch/' ? 60 : 120)) {
      const body = op.template === '/batch/' && value !== null && typeof value === 'object' && !('batch' in value) ? { api_key: fx.projectApiKey, batch: [value] } : value;
      push(`ingest ${name}`, realPath, JSON_TYPE, Buffer.from(toJson(body)));
    }
    if (op.template === '/batch/') {
      push('batch 20k events', realPath, JSON_TYPE, Buffer.from(`{"api_key":${JSON.stringify(fx.projectApiKey)},"batch":${hugeArray(20_000)}}`));
      push('batch of 10 MB event', realPath, JSON_TYPE, [Buffer.from(`{"api_key":${JSON.stringify(fx.projectApiKey)},"batch":[{"event":"x","properties":{"distinct_id":"hostile-user","big":`), tenMegabyteString(), Buffer.from('}}]}')]);
      push('batch historical string', realPath, JSON_TYPE, Buffer.from(toJson({ ...good, historical_migration: 'yes' })));
      push('batch nested batch', realPath, JSON_TYPE, Buffer.from(toJson({ api_key: fx.projectApiKey, batch: [{ batch: [{ event: 'x' }] }] })));
    }
  }

  // Credentials: none, malformed, the wrong kind.
  if (op.scopes) {
    push('auth none', realPath, headersFor, bodyOf(good), { auth: 'none' });
    push('auth bad key', realPath, headersFor, bodyOf(good), { auth: 'bad' });
    push('auth project key', realPath, headersFor, bodyOf(good), { auth: 'project' });
    for (const header of ['Bearer', 'Bearer ', 'Basic abc', `Bearer ${'x'.repeat(4000)}`, 'Bearer phx_\u00ff', 'bearer phx_a phx_b']) push(`auth header ${describe(header)}`, realPath, { ...headersFor, authorization: header }, bodyOf(good), { auth: 'none' });
  }
  if (op.projectKey && good) {
    for (const token of [null, 1, '', ' ', 'phx_personal', 'x'.repeat(65), 'phc_\u0000', '\ud800', ['phc'], { a: 1 }]) push(`token ${describe(token)}`, realPath, JSON_TYPE, Buffer.from(toJson({ ...good, api_key: token })));
  }

  // Every other method on this path.
  for (const method of METHODS) if (method !== op.method) push(`method ${method}`, realPath, headersFor, bodyOf(good), { method });
  return out;
}

/** `count` seeded random mutations for one operation: one part of the request spoiled in a way fast-check picks. */
export function randomCasesFor(op: Operation, fx: Fixtures, count: number, seed: number): HostileCase[] {
  const { route, auth, good, goodText, sendsBody, realPath, destructive, headersFor } = baseline(op, fx);
  const paths = sendsBody ? pathsOf(good) : [];
  const families: fc.Arbitrary<HostileCase>[] = [
    fc.tuple(fc.constantFrom(...Object.keys(op.query), 'format', 'x'), hostileText).map(([name, value]) => ({
      name: `random query ${name}=${describe(value)}`, route, method: op.method, path: `${realPath}${queryString([[name, value]])}`, headers: headersFor, auth, ...(sendsBody ? { body: Buffer.from(goodText) } : {}),
    })),
    fc.array(propertyFilterArb, { minLength: 1, maxLength: 3 }).map((filters) => ({
      name: `random filters ${describe(filters)}`, route, method: op.method, path: `${realPath}${queryString([['properties', toJson(filters)]])}`, headers: headersFor, auth, ...(sendsBody ? { body: Buffer.from(goodText) } : {}),
    })),
  ];
  if (op.params.length > 0) {
    families.push(
      fc.tuple(fc.constantFrom(...op.params), hostileText).map(([param, raw]) => ({
        name: `random path ${param}=${describe(raw)}`, route, method: op.method, path: fillPath(op, fx, { param, raw: encodeLoose(raw) }), headers: headersFor, auth, ...(sendsBody ? { body: Buffer.from(goodText) } : {}),
      })),
    );
  }
  if (paths.length > 0) {
    families.push(
      fc.tuple(fc.constantFrom(...paths), hostileValue).map(([path, value]) => ({
        name: `random body ${path.join('.')}=${describe(value)}`, route, method: op.method, path: realPath, headers: JSON_TYPE, auth, body: Buffer.from(toJson(setAt(good, path, value))),
      })),
      fc.tuple(fc.constantFrom(...paths), fc.array(propertyFilterArb, { maxLength: 4 })).map(([path, filters]) => ({
        name: `random body ${path.join('.')}=filters ${describe(filters)}`, route, method: op.method, path: realPath, headers: JSON_TYPE, auth, body: Buffer.from(toJson(setAt(good, path, filters))),
      })),
      fc.jsonValue({ maxDepth: 5 }).map((value) => ({
        name: `random whole body ${describe(value)}`, route, method: op.method, path: realPath, headers: JSON_TYPE, auth, body: Buffer.from(toJson(value)),
      })),
    );
  }
  return fc.sample(fc.oneof(...families), { seed, numRuns: count }).map((drawn) => (destructive && drawn.path.startsWith(realPath) ? { ...drawn, last: true } : drawn));
}
