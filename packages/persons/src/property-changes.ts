import { samePropertyValue } from './same-property-value.js';

export interface PropertyChange {
  type: 'Person';
  action: 'created' | 'changed' | 'deleted';
  field: string;
  before: unknown;
  after: unknown;
}

/** The per-property before/after an activity log entry records, for the keys that differ. */
export function propertyChanges(before: Record<string, unknown>, after: Record<string, unknown>): PropertyChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes: PropertyChange[] = [];
  for (const field of keys) {
    const had = Object.prototype.hasOwnProperty.call(before, field);
    const has = Object.prototype.hasOwnProperty.call(after, field);
    if (had && has && samePropertyValue(before[field], after[field])) continue;
    const action = !had ? 'created' : !has ? 'deleted' : 'changed';
    changes.push({ type: 'Person', action, field, before: had ? before[field] : null, after: has ? after[field] : null });
  }
  return changes;
}
