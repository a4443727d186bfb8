export * from './property-filter.js';
export { propertyFilterProblem, regexProblem, type FilterProblem, type FilterRules } from './property-filter-problem.js';
export { PropertyFilterError } from './property-filter-error.js';
export { matchProperty } from './match-property.js';
export { CompiledPropertyFilter } from './compile-property-filter.js';
export { parseFlagDate, parseDateInput } from './relative-date.js';
export * from './behavioural-filter.js';
