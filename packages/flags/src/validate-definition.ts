import { propertyFilterProblem, type PropertyFilterType } from '@tributary/property-filters';
import type { ConditionGroup, FlagFilters } from './definition.js';

export interface DefinitionProblem {
  attr: string;
  detail: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isPercentage = (value: unknown) => value === undefined || value === null || (typeof value === 'number' && value >= 0 && value <= 100);

/** Flags read person properties by default; `event` is accepted because definitions stored before this check may use it. */
const FLAG_FILTER_TYPES: readonly PropertyFilterType[] = ['person', 'group', 'cohort', 'event'];

function checkGroups(groups: unknown, attr: string, variants: Set<string>, problems: DefinitionProblem[], now: Date): void {
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
      const problem = propertyFilterProblem(filter, `${at}.properties[${j}]`, { types: FLAG_FILTER_TYPES, now });
      if (problem) problems.push(problem);
    });
  });
}

/** Problems with a flag definition, each naming the field, so the API can answer 400 with it. */
export function validateFlagDefinition(input: { filters?: unknown }, now = new Date()): DefinitionProblem[] {
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
  checkGroups(f.groups, 'filters.groups', variants, problems, now);
  checkGroups(f.super_groups, 'filters.super_groups', variants, problems, now);
  if (f.holdout !== undefined && f.holdout !== null && (!isObject(f.holdout) || !isPercentage(f.holdout.exclusion_percentage) || f.holdout.exclusion_percentage === undefined)) {
    problems.push({ attr: 'filters.holdout', detail: 'filters.holdout needs an id and an exclusion_percentage from 0 to 100.' });
  }
  if (f.payloads !== undefined && !isObject(f.payloads)) problems.push({ attr: 'filters.payloads', detail: 'filters.payloads must be an object.' });
  return problems;
}
