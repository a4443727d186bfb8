import type { CohortFilterGroup } from '@tributary/flags';
import { checkCohortDefinition, idsIn, type CohortGroup } from '@tributary/hogql';
import { badRequest, bodySchemas } from '@tributary/http';
import { PropertyFilterError, VALUE_OPERATORS, actionIdOf, behaviouralFilterProblem, propertyFilterProblem, type BehaviouralFilter } from '@tributary/property-filters';
import { filterContext, type FilterStores } from './filter-cohorts.js';

import type { CohortFilters } from './cohort-store.js';

export type { CohortFilters };

/** A condition on the person's properties (`type: "person"`, the default). */
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

/** Another cohort of the project (`type: "cohort"`, PostHog's cohort-in-cohort): its members, or with `negation` everyone else. */
const cohortFilter = {
  type: 'object',
  required: ['key', 'type', 'value'],
  properties: {
    key: { type: 'string', maxLength: 400 },
    type: { const: 'cohort' },
    value: { anyOf: [{ type: 'integer', minimum: 1, maximum: 2_147_483_647 }, { type: 'string', pattern: '^[1-9][0-9]{0,9}$' }] },
    operator: { enum: ['in', 'not_in'] },
    negation: { type: 'boolean' },
  },
} as const;

/** A behavioural condition (`type: "behavioral"`): its fields are checked by `behaviouralFilterProblem`, which names each. */
const behaviouralFilter = { type: 'object', required: ['key', 'type'], properties: { key: { type: ['string', 'integer'] }, type: { const: 'behavioral' } } } as const;

const conditionSchema = {
  if: { type: 'object', properties: { type: { const: 'behavioral' } }, required: ['type'] },
  then: behaviouralFilter,
  else: { if: { type: 'object', properties: { type: { const: 'cohort' } }, required: ['type'] }, then: cohortFilter, else: propertyFilter },
};

/**
 * Groups nest to a fixed depth (PostHog's own cohorts use two levels: an OR of AND groups), so a
 * stored definition can never be deep enough to exhaust the evaluator's stack.
 */
const MAX_DEPTH = 3;
/** Conditions in one cohort, all groups together: each behavioural one is a pass over events. */
export const MAX_CONDITIONS = 50;
const tooDeep = { not: {}, description: `must be a condition with a key: groups nest at most ${MAX_DEPTH} levels deep` };

function groupSchema(depth: number): Record<string, unknown> {
  return {
    type: 'object',
    required: ['type', 'values'],
    properties: {
      type: { enum: ['AND', 'OR'] },
      values: {
        type: 'array',
        maxItems: MAX_CONDITIONS,
        items: { if: { type: 'object', required: ['key'] }, then: conditionSchema, else: depth > 1 ? groupSchema(depth - 1) : tooDeep },
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

type Condition = NonNullable<CohortFilterGroup['values']>[number];
const isGroup = (value: Condition): value is CohortFilterGroup => !('key' in value);

/** Whether a cohort's members depend on what persons did (behavioural conditions, or a cohort that may have them), which only ClickHouse knows. */
export const readsEvents = (filters: unknown): boolean => idsIn(filters, (node) => (node.type === 'behavioral' || node.type === 'cohort' ? 1 : null)).length > 0;

/** What a cohort's conditions name elsewhere, each with where it stands. */
interface Named {
  cohorts: { id: number; attr: string }[];
  actions: { id: number; attr: string }[];
  conditions: number;
}

/** What a schema cannot say of each condition: the value each operator needs, a behavioural condition's windows and counts. */
function checkConditions(group: CohortFilterGroup, now: Date, at: string, named: Named): void {
  (group.values ?? []).forEach((value, i) => {
    const path = `${at}.values[${i}]`;
    if (isGroup(value)) return checkConditions(value, now, path, named);
    if (++named.conditions > MAX_CONDITIONS) throw badRequest(`A cohort holds at most ${MAX_CONDITIONS} conditions.`, 'filters.properties');
    const condition = value as unknown as Record<string, unknown>;
    if (condition.type === 'cohort') return void named.cohorts.push({ id: Number(condition.value), attr: `${path}.value` });
    const problem = condition.type === 'behavioral' ? behaviouralFilterProblem(value, path, now) : propertyFilterProblem(value, path, { types: ['person'], now });
    if (problem) throw badRequest(problem.detail, problem.attr);
    if (condition.type === 'behavioral' && (condition as unknown as BehaviouralFilter).event_type === 'actions') named.actions.push({ id: actionIdOf(condition.key)!, attr: `${path}.key` });
  });
}

/**
 * A dynamic cohort's conditions, checked before they are stored: each one's values, and, across
 * the project's cohorts and actions, that every cohort and action it names is the project's, that
 * it never comes back to itself (`cohortId`, null for a new cohort), and that cohorts nest within bounds.
 */
export async function checkFilterValues(group: CohortFilterGroup, now: Date, project: { teamId: number; cohortId: number | null; stores: FilterStores }): Promise<void> {
  const named: Named = { cohorts: [], actions: [], conditions: 0 };
  checkConditions(group, now, 'filters.properties', named);
  const context = await filterContext(project.stores, project.teamId, named.cohorts.map((c) => c.id), now, await project.stores.actions.definitions(project.teamId, named.actions.map((a) => a.id)));
  const missingCohort = named.cohorts.find((c) => !context.cohorts.has(c.id));
  if (missingCohort) throw badRequest(`Cohort ${missingCohort.id} does not exist in this project.`, missingCohort.attr);
  const missingAction = named.actions.find((a) => !context.actions?.has(a.id));
  if (missingAction) throw badRequest(`Action ${missingAction.id} does not exist in this project.`, missingAction.attr);
  try {
    checkCohortDefinition(project.cohortId, group as CohortGroup, context);
  } catch (error) {
    if (error instanceof PropertyFilterError) throw badRequest(`${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`, 'filters.properties');
    throw error;
  }
}
