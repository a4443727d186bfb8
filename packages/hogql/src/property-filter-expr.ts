import { PROPERTY_FILTER_TYPES, PropertyFilterError, actionIdOf, isCohortId, propertyFilterProblem, type BehaviouralFilter, type StoredPropertyFilter } from '@tributary/property-filters';
import type { ActionDefinition, ActionStep, StringMatching } from './action-definition.js';
import { escapeRegex, selectorRegex } from './action-expr.js';
import type { Expr, SelectQuery } from './ast.js';
import { behaviouralPersonsQuery } from './behavioural-expr.js';
import { and, call, compare, constant, elementExpr, field, jsonPropertyExpr, not, or, propertyTest, select } from './property-value-expr.js';

/**
 * Property filters (PostHog's `properties=[...]`), cohorts and actions as ordinary HogQL, as
 * PostHog's `property_to_expr`, `cohort` and `action_to_expr` build them: the printer resolves
 * their names and guards every table they read like any query's, and the HogQL printed back from
 * them runs as it is. The three are one module because each can hold the others: a filter names a
 * cohort, a cohort's condition an action, an action's step a filter.
 */

/** A static cohort's members' distinct ids (from Postgres), or a dynamic cohort's groups of conditions. */
export type CohortDefinition = { id: number; static: true; distinctIds: readonly string[] } | { id: number; static: false; filters: CohortGroup };
/** What a dynamic cohort's group holds: person-property filters, behavioural conditions, other cohorts (`type: "cohort"`). */
export type CohortCondition = StoredPropertyFilter | BehaviouralFilter;
export interface CohortGroup {
  type?: 'AND' | 'OR';
  values?: (CohortGroup | CohortCondition)[];
}

export interface FilterContext {
  now: Date;
  /** The cohorts filters name (and the cohorts those name), looked up by the caller in the project. */
  cohorts: ReadonlyMap<number, CohortDefinition>;
  /** The actions an `ActionsNode` or a behavioural condition names, looked up by the caller in the project. */
  actions?: ReadonlyMap<number, ActionDefinition>;
}

/** Cohorts within cohorts nest at most this deep, so a definition can never recurse without end. */
export const MAX_COHORT_NESTING = 5;
/** Conditions one cohort may expand to, those of the cohorts within it included: a cohort naming another many times, at every level, multiplies. */
export const MAX_EXPANDED_CONDITIONS = 200;

/**
 * The context while cohorts are expanded: the cohorts around the one being built, to refuse a
 * cycle (even one through an action's step), and how many more conditions the expansion may add.
 */
interface Expanding extends FilterContext {
  path: readonly number[];
  budget: { left: number };
}

const expanding = (context: FilterContext, path: readonly number[] = []): Expanding =>
  'path' in context ? (context as Expanding) : { ...context, path, budget: { left: MAX_EXPANDED_CONDITIONS } };

const isGroup = (value: CohortGroup | CohortCondition): value is CohortGroup => !('key' in value);
const isBehavioural = (value: CohortCondition): value is BehaviouralFilter => value.type === 'behavioral';

/** The cohort `id` of the project, or a refusal naming it. */
function projectCohort(id: unknown, context: FilterContext): CohortDefinition {
  const cohort = isCohortId(id) ? context.cohorts.get(Number(id)) : undefined;
  if (!cohort) throw new PropertyFilterError(`cohort ${String(id)} does not exist`);
  return cohort;
}

/** What an event must be to count for a behavioural condition: the named event, or one of the action's steps. */
function behaviouralEvent(filter: BehaviouralFilter, context: Expanding): Expr {
  if (filter.event_type === 'events') return compare('==', field('event'), constant(String(filter.key)));
  const id = actionIdOf(filter.key);
  const action = id === null ? undefined : context.actions?.get(id);
  if (!action) throw new PropertyFilterError(`action ${String(filter.key)} does not exist`);
  return actionExpr(action, context);
}

/** One condition of a dynamic cohort, over a row of `persons`. */
function cohortConditionExpr(condition: CohortCondition, context: Expanding, at: string): Expr {
  if (--context.budget.left < 0) throw new PropertyFilterError(`the cohort expands to more than ${MAX_EXPANDED_CONDITIONS} conditions, counting those of the cohorts within it`);
  const negated = condition.negation === true || condition.operator === 'not_in';
  let holds: Expr;
  if (isBehavioural(condition)) {
    holds = compare('in', field('id'), behaviouralPersonsQuery(condition, behaviouralEvent(condition, context), context.now, at));
  } else if (condition.type === 'cohort') {
    holds = compare('in', field('id'), cohortPersonsQuery(projectCohort(condition.value, context), context));
  } else {
    holds = jsonPropertyExpr(field('properties'), condition, context.now);
  }
  return negated ? not(holds) : holds;
}

/** A dynamic cohort's nested AND/OR groups over the project's current persons (an empty group holds). */
function cohortGroupExpr(group: CohortGroup, context: Expanding, at: string): Expr {
  const parts = (group.values ?? []).map((value, i) => (isGroup(value) ? cohortGroupExpr(value, context, `${at}.values[${i}]`) : cohortConditionExpr(value, context, `${at}.values[${i}]`)));
  if (parts.length === 0) return constant(1);
  return group.type === 'OR' ? or(parts) : and(parts);
}

/** A cohort's persons' ids. */
function cohortPersonsQuery(cohort: CohortDefinition, context: Expanding): SelectQuery {
  const { path } = context;
  if (path.includes(cohort.id)) throw new PropertyFilterError(`cohort ${cohort.id} contains itself`);
  if (path.length >= MAX_COHORT_NESTING) throw new PropertyFilterError(`cohorts nest more than ${MAX_COHORT_NESTING} deep at cohort ${cohort.id}`);
  if (cohort.static) return select([field('id')], 'persons', compare('in', field('id'), select([field('person_id')], 'person_distinct_ids', compare('in', field('distinct_id'), { node: 'Constant', value: [...cohort.distinctIds] }))));
  return select([field('id')], 'persons', cohortGroupExpr(cohort.filters, { ...context, path: [...path, cohort.id] }, `cohort ${cohort.id}: filters.properties`));
}

/**
 * The statement listing the person ids (`id`) of the project's cohort `cohortId`, read as the
 * printer reads persons (each one's latest version, deleted ones left out), every table it reads
 * guarded when printed. `context` holds the cohort, the cohorts and actions it names, and `now`.
 */
export function cohortPersonIdsQuery(cohortId: number, context: FilterContext): SelectQuery {
  return cohortPersonsQuery(projectCohort(cohortId, context), expanding(context));
}

/**
 * Builds a cohort's conditions as they are to be stored (`id` null for a new cohort), so that a
 * cycle back to it, nesting too deep, or a cohort or action the project lacks is refused before
 * it is saved rather than each time it is used.
 */
export function checkCohortDefinition(id: number | null, filters: CohortGroup, context: FilterContext): void {
  // 0 names no cohort, and stands for the new one in the path, so nesting counts as it will when used.
  cohortGroupExpr(filters, expanding(context, [id ?? 0]), 'filters.properties');
}

/**
 * Membership of a cohort, through the event's distinct id, so events sent before a merge still
 * count for the person: a static cohort's members are listed; a dynamic cohort's are the persons
 * its conditions match.
 */
function cohortExpr(filter: StoredPropertyFilter, context: FilterContext): Expr {
  const cohort = projectCohort(filter.value, context);
  const members = cohort.static
    ? compare('in', field('distinct_id'), { node: 'Constant', value: [...cohort.distinctIds] })
    : compare('in', field('distinct_id'), select([field('distinct_id')], 'person_distinct_ids', compare('in', field('person_id'), cohortPersonsQuery(cohort, expanding(context)))));
  return filter.operator === 'not_in' ? not(members) : members;
}

const GROUP_COLUMN = /^\$group_[0-4]$/;

/** One filter over a row of `events`, of any type; event properties are the default. */
function filterExpr(filter: StoredPropertyFilter, context: FilterContext): Expr {
  switch (filter.type ?? 'event') {
    case 'event': {
      // Ingest keeps an event's groups in its `$group_N` columns only, where PostHog copies them into
      // the properties too: a filter on one (a group's events, as PostHog's UI asks) reads the column.
      if (GROUP_COLUMN.test(filter.key)) {
        const column = field(filter.key);
        return propertyTest(compare('!=', column, constant('')), column, column, filter, context.now);
      }
      return jsonPropertyExpr(field('properties'), filter, context.now);
    }
    case 'person':
      // As at the event, as PostHog's person-on-events mode reads them.
      return jsonPropertyExpr(field('poe', 'properties'), filter, context.now);
    case 'group': {
      const index = filter.group_type_index;
      if (index === undefined) throw new PropertyFilterError(`group property filter on ${filter.key} needs group_type_index 0 to 4`);
      const keys = select([field('key')], 'groups', and([compare('==', field('index'), constant(index)), jsonPropertyExpr(field('properties'), filter, context.now)]));
      return compare('in', field(`$group_${index}`), keys);
    }
    case 'element':
      return elementExpr(filter, context.now);
    default:
      return cohortExpr(filter, context);
  }
}

/** `properties=[...]` over the events table, one condition per filter, all of which must hold; each is checked first. */
export function propertyFilterExprs(filters: readonly StoredPropertyFilter[], context: FilterContext, at = 'properties'): Expr[] {
  return filters.map((filter, i) => {
    const problem = propertyFilterProblem(filter, `${at}[${i}]`, { types: PROPERTY_FILTER_TYPES, now: context.now });
    if (problem) throw new PropertyFilterError(`property filter on ${String(filter.key)}: ${problem.detail}`);
    return filterExpr(filter, context);
  });
}

/**
 * Cohort ids a filter list refers to, so the caller can look them up first. Only well-formed ids:
 * the caller looks them up in Postgres, and a filter with any other value is refused when built.
 */
export function cohortIds(filters: readonly StoredPropertyFilter[]): number[] {
  return filters.filter((f) => f.type === 'cohort' && isCohortId(f.value)).map((f) => Number(f.value));
}

// ---- Actions: an action is the OR of its steps, a step the AND of its conditions.

/** PostHog tests the clicked element only on autocaptured events. */
const AUTOCAPTURE = '$autocapture';
const TRUE: Expr = { node: 'Constant', value: true };

/** `$current_url` as PostHog's steps test it: equal, `like %url%` (so `%` and `_` are wildcards, as there), or a regular expression. */
function urlExpr(url: string, matching: StringMatching | null | undefined): Expr {
  const current = field('properties', '$current_url');
  if (matching === 'exact') return compare('==', current, constant(url));
  if (matching === 'regex') return call('match', current, constant(url));
  return compare('like', current, constant(`%${url}%`));
}

/** An element filter (`text`, `href`), as the property filters test one, with the step's matching. */
function elementFilter(key: 'text' | 'href', value: string, matching: StringMatching | null | undefined): StoredPropertyFilter {
  const operator = matching === 'regex' ? 'regex' : matching === 'contains' ? 'icontains' : 'exact';
  return { key, value, operator, type: 'element' };
}

function stepExpr(step: ActionStep, context: FilterContext, at: string): Expr {
  const exprs: Expr[] = [];
  const filters: StoredPropertyFilter[] = [];
  if (step.event) exprs.push(compare('==', field('event'), constant(step.event)));
  if (step.event === AUTOCAPTURE) {
    if (step.selector) exprs.push(call('match', field('elements_chain'), constant(selectorRegex(step.selector))));
    if (step.tag_name) exprs.push(call('match', field('elements_chain'), constant(`(?:^|;)${escapeRegex(step.tag_name)}(?:\\.|$|;|:)`)));
    if (step.href != null) filters.push(elementFilter('href', step.href, step.href_matching));
    if (step.text != null) filters.push(elementFilter('text', step.text, step.text_matching));
  }
  if (step.url) exprs.push(urlExpr(step.url, step.url_matching));
  filters.push(...(step.properties ?? []));
  exprs.push(...propertyFilterExprs(filters, context, `${at}.properties`));
  if (exprs.length === 0) return TRUE;
  return and(exprs);
}

/** Whether an event is the action: any of its steps (every event, for an action without steps, as PostHog's). */
export function actionExpr(action: ActionDefinition, context: FilterContext): Expr {
  const steps = action.steps.map((step, i) => stepExpr(step, context, `steps[${i}]`));
  if (steps.length === 0) return TRUE;
  return or(steps);
}
