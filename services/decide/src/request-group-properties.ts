import { assignOwn, setOwn } from '@tributary/payload';

type GroupProperties = Record<string, Record<string, unknown>>;

/**
 * The stored properties of the request's groups with those the request sent laid over them,
 * type by type (the request's win). Group types are names a project chose, so they are read and
 * written as own keys: a type called `__proto__` or `constructor` is a type like any other.
 */
export function withRequestGroupProperties(stored: GroupProperties, sent: GroupProperties | undefined): GroupProperties {
  if (!sent) return stored;
  for (const type of Object.keys(sent)) {
    const kept = Object.hasOwn(stored, type) ? stored[type] : undefined;
    setOwn(stored, type, assignOwn(assignOwn({}, kept), sent[type]));
  }
  return stored;
}
