/**
 * The ids `pick` finds in a request's objects, wherever they stand in it (the query's, each
 * series', each step's), each once: what the caller looks up in the project before printing.
 */
export function idsInRequest(request: unknown, pick: (node: Record<string, unknown>) => number | undefined): number[] {
  const ids = new Set<number>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const node = value as Record<string, unknown>;
    const id = pick(node);
    if (id !== undefined) ids.add(id);
    Object.values(node).forEach(visit);
  };
  visit(request);
  return [...ids];
}
