/**
 * Whether two property values, as JSON holds them, are the same. Most are strings and numbers,
 * compared directly; only objects and arrays go through their JSON text (so `{a:1,b:2}` and
 * `{b:2,a:1}` count as different, which at worst writes a value that did not change).
 */
export const samePropertyValue = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b));
