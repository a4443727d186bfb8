import { Ajv, type ErrorObject } from 'ajv';
import { OPERATORS, parseFlagDate, type CohortFilterGroup } from '@tributary/flags';
import { badRequest } from '@tributary/http';

export interface CohortFilters {
  properties: CohortFilterGroup;
}

/** `in`/`not_in` only make sense on a cohort reference, which cohort filters do not take. */
const PERSON_OPERATORS = OPERATORS.filter((operator) => operator !== 'in' && operator !== 'not_in');
const DATE_OPERATORS: readonly string[] = ['is_date_before', 'is_date_after', 'is_date_exact'];
const REGEX_OPERATORS: readonly string[] = ['regex', 'not_regex'];

/**
 * Only person-property filters: flag evaluation and the events API's cohort filter both read a
 * cohort as conditions on person properties, and no reference to another cohort means no cycles.
 */
const propertyFilter = {
  type: 'object',
  required: ['key'],
  properties: {
    key: { type: 'string', minLength: 1, maxLength: 400 },
    type: { enum: ['person'] },
    operator: { enum: PERSON_OPERATORS },
    negation: { type: 'boolean' },
  },
  // Matching a present property against a missing value has no meaning, and the engine cannot do it.
  if: { properties: { operator: { enum: ['is_set', 'is_not_set'] } }, required: ['operator'] },
  else: { required: ['value'] },
} as const;

/**
 * Groups nest to a fixed depth (PostHog's own cohorts use two levels: an OR of AND groups), so a
 * stored definition can never be deep enough to exhaust the evaluator's stack.
 */
const MAX_DEPTH = 3;

function groupSchema(depth: number): Record<string, unknown> {
  return {
    type: 'object',
    required: ['type', 'values'],
    properties: {
      type: { enum: ['AND', 'OR'] },
      values: {
        type: 'array',
        items: { if: { type: 'object', required: ['key'] }, then: propertyFilter, else: depth > 1 ? groupSchema(depth - 1) : false },
      },
    },
  };
}

const filtersSchema = { type: 'object', required: ['properties'], properties: { properties: groupSchema(MAX_DEPTH) } };

export interface CohortCreateBody {
  name: string;
  description: string;
  is_static: boolean;
  filters?: CohortFilters;
  distinct_ids?: string[];
}

const distinctIds = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 400 } };

const ajv = new Ajv({ allErrors: false, useDefaults: true });

export const validateCreate = ajv.compile<CohortCreateBody>({
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 400 },
    description: { type: 'string', maxLength: 1000, default: '' },
    is_static: { type: 'boolean', default: false },
    filters: filtersSchema,
    distinct_ids: distinctIds,
  },
});

export const validatePatch = ajv.compile<Partial<CohortCreateBody>>({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 400 },
    description: { type: 'string', maxLength: 1000 },
    is_static: { type: 'boolean' },
    filters: filtersSchema,
    distinct_ids: distinctIds,
  },
});

/** `/filters/properties/values/0/key` -> `filters.properties.values[0].key`, as flag validation names fields. */
function attrOf(pointer: string, property?: string): string {
  const segments = pointer.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (property !== undefined) segments.push(property);
  return segments.reduce((out, segment) => (/^\d+$/.test(segment) ? `${out}[${segment}]` : out ? `${out}.${segment}` : segment), '');
}

/** The first schema violation as a 400 naming the field. */
export function schemaError(errors: ErrorObject[] | null | undefined): never {
  const error = errors?.[0];
  if (!error) throw badRequest('Request body is invalid.');
  if (error.keyword === 'required') {
    const attr = attrOf(error.instancePath, (error.params as { missingProperty: string }).missingProperty);
    throw badRequest(`${attr} is required.`, attr);
  }
  const attr = attrOf(error.instancePath) || null;
  if (error.keyword === 'false schema') {
    throw badRequest(`${attr} must be a property filter with a key: groups nest at most ${MAX_DEPTH} levels deep.`, attr);
  }
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.join(', ');
    throw badRequest(`${attr} must be one of: ${allowed}.`, attr);
  }
  throw badRequest(`${attr ?? 'body'} ${error.message ?? 'is invalid'}.`, attr);
}

const isGroup = (value: CohortFilterGroup | NonNullable<CohortFilterGroup['values']>[number]): value is CohortFilterGroup => !('key' in value);

/**
 * What a schema cannot say: patterns must compile (an invalid one would silently never match)
 * and date operators need a date the evaluator can read.
 */
export function checkFilterValues(group: CohortFilterGroup, now: Date, at = 'filters.properties'): void {
  (group.values ?? []).forEach((value, i) => {
    const path = `${at}.values[${i}]`;
    if (isGroup(value)) return checkFilterValues(value, now, path);
    const operator = value.operator ?? 'exact';
    if (REGEX_OPERATORS.includes(operator)) {
      try {
        new RegExp(String(value.value));
      } catch {
        throw badRequest(`${path}.value is not a valid regular expression.`, `${path}.value`);
      }
    }
    if (DATE_OPERATORS.includes(operator) && parseFlagDate(value.value, now) === null) {
      throw badRequest(`${path}.value must be an ISO 8601 date or a relative date such as -7d.`, `${path}.value`);
    }
  });
}
