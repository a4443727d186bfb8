import { PROPERTY_OPERATORS, VALUE_OPERATORS, VALUE_SHAPES, isCohortId, isCohortOperator, type PropertyFilterType, type PropertyOperator } from './property-filter.js';
import { parseDateInput } from './relative-date.js';

export interface FilterProblem {
  attr: string;
  detail: string;
}

export interface FilterRules {
  /** The filter types this reader accepts; the first is the default for a filter without one. */
  types: readonly PropertyFilterType[];
  now: Date;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isScalar = (value: unknown) => typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

/**
 * Syntax JavaScript runs and ClickHouse's RE2 refuses or reads otherwise, so a pattern using it
 * would match in flags and fail in the events API: lookaround, back-references, named groups,
 * `\p` classes, escapes RE2 lacks or means differently (`\u`, `\c`, `\0`, `\Q`, `\Z`, `[\b]`),
 * POSIX classes, and repeat counts above RE2's limit of 1000.
 */
const NOT_PORTABLE = /\(\?<?[=!]|\\[1-9]|\(\?<|\\[pPucC0QEZ]|\[[^\]]*\\b|\[\[:\w*:\]/;
const largeRepeat = (pattern: string) => [...pattern.matchAll(/\{(\d+)(?:,(\d*))?\}/g)].some(([, low, high]) => Number(low) > 1000 || Number(high || 0) > 1000);

/** What keeps a pattern from running alike in JavaScript and in ClickHouse (RE2), or null. */
export function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern);
  } catch {
    return 'is not a valid regular expression';
  }
  return NOT_PORTABLE.test(pattern) || largeRepeat(pattern) ? 'uses syntax ClickHouse (RE2) cannot run: lookaround, back-references, named groups, \\p, \\u or \\c escapes, POSIX classes or repeats over 1000' : null;
}

function valueProblem(operator: PropertyOperator, value: unknown, now: Date): string | null {
  switch (VALUE_SHAPES[operator]) {
    case 'none':
      return null;
    case 'scalar':
      return isScalar(value) ? null : 'must be a string, number or boolean';
    case 'scalar_or_list':
      if (Array.isArray(value)) return value.length > 0 && value.every(isScalar) ? null : 'must be a non-empty list of strings, numbers or booleans';
      return isScalar(value) ? null : 'must be a string, number or boolean, or a list of them';
    case 'pattern':
      return typeof value === 'string' ? regexProblem(value) : 'must be a regular expression, as a string';
    case 'date':
      return typeof value === 'string' && parseDateInput(value, now) !== null ? null : 'must be an ISO 8601 date or a relative date such as -7d';
    case 'cohort_id':
      return isCohortId(value) ? null : 'must be a cohort id';
  }
}

/**
 * The first thing wrong with one filter, named by its attribute path under `at`, or null.
 * Every reader validates with this before storing or compiling a filter, so an operator that a
 * backend could not run is refused with a 400 instead of failing later.
 */
export function propertyFilterProblem(filter: unknown, at: string, rules: FilterRules): FilterProblem | null {
  if (!isObject(filter) || typeof filter.key !== 'string' || filter.key === '') return { attr: at, detail: `${at} needs a key.` };
  const type = (filter.type ?? rules.types[0]) as PropertyFilterType;
  if (!rules.types.includes(type)) return { attr: `${at}.type`, detail: `${at}.type must be one of: ${rules.types.join(', ')}.` };
  const operator = String(filter.operator ?? (type === 'cohort' ? 'in' : 'exact'));
  if (!(PROPERTY_OPERATORS as readonly string[]).includes(operator)) {
    return {
      attr: `${at}.operator`,
      detail: `${at}.operator: unknown operator ${JSON.stringify(operator)} (${JSON.stringify(operator)} is not a known operator; use one of ${PROPERTY_OPERATORS.join(', ')}).`,
    };
  }
  const known = operator as PropertyOperator;
  if ((type === 'cohort') !== isCohortOperator(known)) {
    const allowed = type === 'cohort' ? 'in, not_in' : VALUE_OPERATORS.join(', ');
    return { attr: `${at}.operator`, detail: `${at}.operator "${operator}" does not apply to ${type} filters; use one of ${allowed}.` };
  }
  if (type === 'group' && filter.group_type_index !== undefined && !(Number.isInteger(filter.group_type_index) && Number(filter.group_type_index) >= 0 && Number(filter.group_type_index) <= 4)) {
    return { attr: `${at}.group_type_index`, detail: `${at}.group_type_index must be a group type index from 0 to 4.` };
  }
  if (VALUE_SHAPES[known] !== 'none' && (filter.value === undefined || filter.value === null)) {
    return { attr: `${at}.value`, detail: `${at}.value is required for operator "${operator}".` };
  }
  const problem = valueProblem(known, filter.value, rules.now);
  return problem ? { attr: `${at}.value`, detail: `${at}.value ${problem}.` } : null;
}

