import { asText, isNumeric, type StoredPropertyFilter, type ValueOperator } from './property-filter.js';
import { parseFlagDate } from './relative-date.js';

export const lower = (value: unknown) => asText(value).toLowerCase();
export const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/** `gt`/`gte`/`lt`/`lte`: as numbers when both sides are numeric, else as text. */
export function compare(override: unknown, value: unknown, operator: 'gt' | 'gte' | 'lt' | 'lte'): boolean {
  const numbers = isNumeric(override) && isNumeric(value);
  const a = numbers ? Number(override) : String(override);
  const b = numbers ? Number(value) : String(value);
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

export function safeRegex(pattern: unknown): RegExp | null {
  try {
    return new RegExp(String(pattern));
  } catch {
    return null;
  }
}

/** Operators that a missing property satisfies. */
export const NEGATIVE: ReadonlySet<ValueOperator> = new Set(['is_not', 'not_icontains', 'not_regex', 'is_not_set']);

/**
 * One property filter against a property bag, with PostHog's operator semantics: string
 * comparisons ignore case, an array value means "any of", numbers compare as numbers when both
 * sides are numeric, an invalid regex never matches, and a missing property matches only the
 * negative operators (`is_not`, `is_not_set`, `not_icontains`, `not_regex`). This is the
 * reference the ClickHouse and Postgres compilers are tested against.
 */
export function matchProperty(filter: StoredPropertyFilter, properties: Record<string, unknown>, now: Date): boolean {
  const operator = (filter.operator ?? 'exact') as ValueOperator;
  const present = Object.prototype.hasOwnProperty.call(properties, filter.key) && properties[filter.key] !== undefined;
  if (operator === 'is_set') return present;
  if (!present) return NEGATIVE.has(operator);
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
    case 'is_not_set':
      return false;
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
      // Cohort operators, or an operator a definition stored before validation may hold.
      return false;
  }
}
