import { OPERATORS, type ConditionGroup, type FlagFilters } from './definition.js';

export interface DefinitionProblem {
  attr: string;
  detail: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isPercentage = (value: unknown) => value === undefined || value === null || (typeof value === 'number' && value >= 0 && value <= 100);

function checkGroups(groups: unknown, attr: string, variants: Set<string>, problems: DefinitionProblem[]): void {
  if (groups === undefined) return;
  if (!Array.isArray(groups)) {
    problems.push({ attr, detail: `${attr} must be a list of condition groups.` });
    return;
  }
  groups.forEach((group: ConditionGroup, i) => {
    const at = `${attr}[${i}]`;
    if (!isObject(group)) return void problems.push({ attr: at, detail: `${at} must be an object.` });
    if (!isPercentage(group.rollout_percentage)) problems.push({ attr: `${at}.rollout_percentage`, detail: `${at}.rollout_percentage must be a number from 0 to 100.` });
    if (group.variant !== undefined && group.variant !== null && !variants.has(String(group.variant))) {
      problems.push({ attr: `${at}.variant`, detail: `${at}.variant "${group.variant}" is not one of the flag's variants.` });
    }
    if (group.properties !== undefined && !Array.isArray(group.properties)) return void problems.push({ attr: `${at}.properties`, detail: `${at}.properties must be a list.` });
    (group.properties ?? []).forEach((filter, j) => {
      const fat = `${at}.properties[${j}]`;
      if (!isObject(filter) || typeof filter.key !== 'string' || filter.key === '') return void problems.push({ attr: fat, detail: `${fat} needs a key.` });
      const operator = String(filter.operator ?? 'exact');
      if (!(OPERATORS as readonly string[]).includes(operator)) {
        problems.push({ attr: `${fat}.operator`, detail: `${fat}.operator "${operator}" is not a known operator (${OPERATORS.join(', ')}).` });
      }
      if (operator !== 'is_set' && operator !== 'is_not_set' && (filter.value === undefined || filter.value === null)) {
        problems.push({ attr: `${fat}.value`, detail: `${fat}.value is required for operator "${operator}".` });
      }
      if (operator === 'regex' || operator === 'not_regex') {
        try {
          new RegExp(String(filter.value));
        } catch {
          problems.push({ attr: `${fat}.value`, detail: `${fat}.value is not a valid regular expression.` });
        }
      }
      if (filter.type !== undefined && !['person', 'group', 'cohort', 'event'].includes(String(filter.type))) {
        problems.push({ attr: `${fat}.type`, detail: `${fat}.type must be person, group or cohort.` });
      }
    });
  });
}

/** Problems with a flag definition, each naming the field, so the API can answer 400 with it. */
export function validateFlagDefinition(input: { filters?: unknown }): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const filters = input.filters;
  if (filters === undefined) return problems;
  if (!isObject(filters)) return [{ attr: 'filters', detail: 'filters must be an object.' }];
  const f = filters as FlagFilters;
  const variants = new Set<string>();
  if (f.multivariate !== undefined && f.multivariate !== null) {
    const list = f.multivariate.variants;
    if (!Array.isArray(list) || list.length === 0) {
      problems.push({ attr: 'filters.multivariate.variants', detail: 'filters.multivariate.variants must be a non-empty list.' });
    } else {
      let total = 0;
      list.forEach((variant, i) => {
        if (!isObject(variant) || typeof variant.key !== 'string' || variant.key === '') {
          problems.push({ attr: `filters.multivariate.variants[${i}].key`, detail: `Variant ${i} needs a key.` });
          return;
        }
        if (variants.has(variant.key)) problems.push({ attr: `filters.multivariate.variants[${i}].key`, detail: `Variant key "${variant.key}" is used twice.` });
        variants.add(variant.key);
        if (typeof variant.rollout_percentage !== 'number' || !isPercentage(variant.rollout_percentage)) {
          problems.push({ attr: `filters.multivariate.variants[${i}].rollout_percentage`, detail: `Variant "${variant.key}" needs a rollout_percentage from 0 to 100.` });
        } else total += variant.rollout_percentage;
      });
      if (Math.abs(total - 100) > 1e-9) problems.push({ attr: 'filters.multivariate.variants', detail: `Variant rollout percentages must add up to 100, not ${total}.` });
    }
  }
  const index = f.aggregation_group_type_index;
  if (index !== undefined && index !== null && !(Number.isInteger(index) && index >= 0 && index <= 4)) {
    problems.push({ attr: 'filters.aggregation_group_type_index', detail: 'filters.aggregation_group_type_index must be a group type index from 0 to 4.' });
  }
  checkGroups(f.groups, 'filters.groups', variants, problems);
  checkGroups(f.super_groups, 'filters.super_groups', variants, problems);
  if (f.holdout !== undefined && f.holdout !== null && (!isObject(f.holdout) || !isPercentage(f.holdout.exclusion_percentage) || f.holdout.exclusion_percentage === undefined)) {
    problems.push({ attr: 'filters.holdout', detail: 'filters.holdout needs an id and an exclusion_percentage from 0 to 100.' });
  }
  if (f.payloads !== undefined && !isObject(f.payloads)) problems.push({ attr: 'filters.payloads', detail: 'filters.payloads must be an object.' });
  return problems;
}
