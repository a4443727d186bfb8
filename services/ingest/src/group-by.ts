/**
 * `items` grouped by `keyOf`, each group holding `valueOf` of its items in their order; groups in
 * the order their keys first appear. Appends in place: a chunk groups thousands of events, and
 * copying a group's list to add one more cost time quadratic in its size.
 */
export function groupBy<T, K, V>(items: Iterable<T>, keyOf: (item: T) => K, valueOf: (item: T) => V): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(valueOf(item));
    else groups.set(key, [valueOf(item)]);
  }
  return groups;
}
