import type { PropertyFilter } from './definition.js';
import { parseFlagDate } from './relative-date.js';

const lower = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value)).toLowerCase();
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const isNumber = (value: unknown) =>
  typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)));

function compare(override: unknown, value: unknown, operator: 'gt' | 'gte' | 'lt' | 'lte'): boolean {
  let a: number | string;
  let b: number | string;
  if (isNumber(override) && isNumber(value)) {
    a = Number(override);
    b = Number(value);
  } else {
    a = String(override);
    b = String(value);
  }
  switch (operator) {
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
  }
}

function safeRegex(pattern: unknown): RegExp | null {
  try {
    return new RegExp(String(pattern));
  } catch {
    return null;
  }
}

/**
 * One property filter against a property bag, with PostHog's operator semantics: string
 * comparisons ignore case, an array value means "any of", numbers compare as numbers when both
 * sides are numeric, an invalid regex never matches, and a missing property matches only the
 * negative operators (`is_not`, `is_not_set`, `not_icontains`, `not_regex`).
 */
export function matchProperty(filter: PropertyFilter, properties: Record<string, unknown>, now: Date): boolean {
  const operator = filter.operator ?? 'exact';
  const present = Object.prototype.hasOwnProperty.call(properties, filter.key) && properties[filter.key] !== undefined;
  if (operator === 'is_set') return present;
  if (operator === 'is_not_set') return !present;
  if (!present) return operator === 'is_not' || operator === 'not_icontains' || operator === 'not_regex';
  const override = properties[filter.key];
  const value = filter.value;
  // A filter stored before validation required a value may lack one: it matches nothing.
  if (value === undefined || value === null) return false;
  switch (operator) {
    case 'exact':
      return asList(value).some((v) => lower(v) === lower(override));
    case 'is_not':
      return !asList(value).some((v) => lower(v) === lower(override));
    case 'icontains':
      return lower(override).includes(lower(value));
    case 'not_icontains':
      return !lower(override).includes(lower(value));
    case 'regex': {
      const regex = safeRegex(value);
      return regex !== null && regex.test(String(override));
    }
    case 'not_regex': {
      const regex = safeRegex(value);
      return regex !== null && !regex.test(String(override));
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compare(override, value, operator);
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const target = parseFlagDate(value, now);
      const actual = parseFlagDate(override, now);
      if (!target || !actual) return false;
      if (operator === 'is_date_exact') return actual.getTime() === target.getTime();
      return operator === 'is_date_before' ? actual < target : actual > target;
    }
    default:
      return false;
  }
}
