/**
 * A copy of a parsed tree (any part of it) with each node `replace` gives a value for replaced by
 * that value, and the others copied with their children replaced in turn. Parsed trees are cached
 * and shared, so they are copied rather than changed in place.
 */
export function replaceNodes<T>(tree: T, replace: (node: Record<string, unknown>) => unknown): T {
  const copy = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(copy);
    if (value === null || typeof value !== 'object') return value;
    const node = value as Record<string, unknown>;
    const replaced = replace(node);
    if (replaced !== undefined) return replaced;
    return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, copy(child)]));
  };
  return copy(tree) as T;
}
