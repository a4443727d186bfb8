import { assignOwn, setOwn } from '@tributary/payload';
import { samePropertyValue } from '@tributary/persons';

export type Properties = Record<string, unknown>;

export interface PersonUpdates {
  set: Properties;
  setOnce: Properties;
  unset: readonly string[];
}

/** Event properties that also describe the person: copied to `$set` and, as `$initial_*`, to `$set_once`. */
export const INITIAL_PROPERTIES = [
  '$browser', '$browser_version', '$device_type', '$current_url', '$pathname', '$os', '$os_name', '$os_version',
  '$referring_domain', '$referrer', '$screen_height', '$screen_width', '$viewport_height', '$viewport_width', '$raw_user_agent',
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'gclid', 'gad_source', 'gclsrc', 'dclid', 'gbraid',
  'wbraid', 'fbclid', 'msclkid', 'twclid', 'li_fat_id', 'mc_cid', 'igshid', 'ttclid', 'rdt_cid',
] as const;

/** Each initial property with the `$initial_*` name it gets, worked out once: this runs for every event. */
const INITIAL_KEYS = INITIAL_PROPERTIES.map((key) => [key, `$initial_${key.replace(/^\$/, '')}`] as const);

const UNSET_NOTHING: readonly string[] = Object.freeze([]);

const isObject = (value: unknown): value is Properties => value !== null && typeof value === 'object' && !Array.isArray(value);

function unsetKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((k): k is string => typeof k === 'string');
  if (isObject(value)) return Object.keys(value);
  return [];
}

/** `base` with the keys of the objects among `inner` and `top` over it, `top` winning. */
function withUpdates(base: Properties, inner: unknown, top: unknown): Properties {
  // `base` is this call's own object, so it takes the keys itself.
  if (isObject(inner)) assignOwn(base, inner);
  if (isObject(top)) assignOwn(base, top);
  return base;
}

/**
 * What an event asks to change on its person: `$set`/`$set_once` from the properties and the
 * top level (the top level wins), `$unset` as a list or an object's keys, plus the
 * marketing and device properties the event carries.
 */
export function extractPersonUpdates(event: { properties?: Properties | null; $set?: unknown; $set_once?: unknown; $unset?: unknown }): PersonUpdates {
  const properties = event.properties ?? {};
  const fromEventProperties: Properties = {};
  const initial: Properties = {};
  for (const [key, initialKey] of INITIAL_KEYS) {
    if (properties[key] === undefined) continue;
    fromEventProperties[key] = properties[key];
    initial[initialKey] = properties[key];
  }
  return {
    set: withUpdates(fromEventProperties, properties.$set, event.$set),
    setOnce: withUpdates(initial, properties.$set_once, event.$set_once),
    // Most events unset nothing: no list is built for them.
    unset: properties.$unset === undefined && event.$unset === undefined ? UNSET_NOTHING : [...new Set([...unsetKeys(properties.$unset), ...unsetKeys(event.$unset)])],
  };
}

/**
 * `$set_once` only fills keys the person lacks, `$set` overwrites, `$unset` removes. Keys are the
 * person's own: `in` also finds what every object inherits, so a `$set_once` of `constructor` or
 * `toString` was dropped, and assigned, a `__proto__` key set the copy's prototype instead.
 */
export function applyPersonUpdates(current: Properties, updates: PersonUpdates): { properties: Properties; changed: boolean } {
  // Most events change nothing: the copy is made at the first change only. (No helper closure:
  // tsx would name it with a defineProperty call on every event.)
  let copy: Properties | null = null;
  for (const key in updates.setOnce) {
    if (!Object.hasOwn(copy ?? current, key)) setOwn((copy ??= { ...current }), key, updates.setOnce[key]);
  }
  for (const key in updates.set) {
    const value = updates.set[key];
    const properties = copy ?? current;
    if (!Object.hasOwn(properties, key) || !samePropertyValue(properties[key], value)) setOwn((copy ??= { ...current }), key, value);
  }
  for (const key of updates.unset) {
    if (Object.hasOwn(copy ?? current, key)) delete (copy ??= { ...current })[key];
  }
  return { properties: copy ?? current, changed: copy !== null };
}

/** A new person's properties: `{...$set_once, ...$set}` without the unset keys. */
export function initialPersonProperties(updates: PersonUpdates): Properties {
  return applyPersonUpdates({}, updates).properties;
}
