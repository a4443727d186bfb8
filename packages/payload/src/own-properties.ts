/**
 * Writes `source`'s own properties onto `target` as `{ ...target, ...source }` would: a later
 * value wins and a key keeps the place it first took; a missing source adds nothing. Ingest and
 * decide merge parsed properties several times per event and request, and V8 spreads such
 * objects slowly and with much garbage; assigning in place is far cheaper.
 */
export function assignOwn<T extends Record<string, unknown>>(target: T, source: Record<string, unknown> | undefined | null): T {
  if (!source) return target;
  if (!Object.hasOwn(source, '__proto__')) return Object.assign(target, source);
  for (const key of Object.keys(source)) setOwn(target, key, source[key]);
  return target;
}

/**
 * `target[key] = value`, but as spreads and `Object.fromEntries` make it: JSON.parse makes
 * `__proto__` an own key, and assigned it would set the prototype instead of a property.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}
