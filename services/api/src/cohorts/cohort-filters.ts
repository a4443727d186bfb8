import type { CohortFilterGroup } from '@tributary/flags';
import { badRequest, bodySchemas } from '@tributary/http';
import { VALUE_OPERATORS, propertyFilterProblem } from '@tributary/property-filters';

export interface CohortFilters {
  properties: CohortFilterGroup;
}

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
    operator: { enum: VALUE_OPERATORS },
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
const tooDeep = { not: {}, description: `must be a property filter with a key: groups nest at most ${MAX_DEPTH} levels deep` };

function groupSchema(depth: number): Record<string, unknown> {
  return {
    type: 'object',
    required: ['type', 'values'],
    properties: {
      type: { enum: ['AND', 'OR'] },
      values: {
        type: 'array',
        items: { if: { type: 'object', required: ['key'] }, then: propertyFilter, else: depth > 1 ? groupSchema(depth - 1) : tooDeep },
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

export const { create: createSchema, patch: patchSchema } = bodySchemas(
  { name: { type: 'string', minLength: 1, maxLength: 400 }, description: { type: 'string', maxLength: 1000 }, is_static: { type: 'boolean' }, filters: filtersSchema, distinct_ids: distinctIds },
  { required: ['name'], defaults: { description: '', is_static: false } },
);

const isGroup = (value: CohortFilterGroup | NonNullable<CohortFilterGroup['values']>[number]): value is CohortFilterGroup => !('key' in value);

/** What a schema cannot say: the value each operator needs (patterns that compile, dates the backends read). */
export function checkFilterValues(group: CohortFilterGroup, now: Date, at = 'filters.properties'): void {
  (group.values ?? []).forEach((value, i) => {
    const path = `${at}.values[${i}]`;
    if (isGroup(value)) return checkFilterValues(value, now, path);
    const problem = propertyFilterProblem(value, path, { types: ['person'], now });
    if (problem) throw badRequest(problem.detail, problem.attr);
  });
}
