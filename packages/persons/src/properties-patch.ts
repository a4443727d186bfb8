import { samePropertyValue } from './same-property-value.js';

/**
 * What turns a person's stored properties into their new state, as Postgres applies it:
 * `(stored || set) - unset`. Nearly every update changes a few keys of dozens (an event's page
 * and device properties), and written whole, each person's properties would be parsed into jsonb
 * again, which costs Postgres several times what the changed keys alone do.
 */
export interface PropertiesPatch {
  /** Keys that are new or hold another value, with the value, as JSON text of an object. */
  set: string;
  /** Keys the new state no longer has. */
  unset: string[];
}

/**
 * The patch from `before` to `after`. A value left alone stays as Postgres holds it, so a number
 * beyond a double's precision read from jsonb is not rewritten rounded.
 */
export function propertiesPatch(before: Record<string, unknown>, after: Record<string, unknown>): PropertiesPatch {
  // Built as text: `__proto__` is an ordinary key here, which an object would need defined.
  let set = '';
  for (const key of Object.keys(after)) {
    if (Object.hasOwn(before, key) && samePropertyValue(before[key], after[key])) continue;
    set += `${set === '' ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(after[key])}`;
  }
  return { set: `{${set}}`, unset: Object.keys(before).filter((key) => !Object.hasOwn(after, key)) };
}
