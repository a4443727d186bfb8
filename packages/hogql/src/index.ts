export type * from './ast.js';
export { HogQLError, queryError, type Span } from './errors.js';
export { loadHogQLParser, parseSelect, parseExpr, parseOrderExpr, MAX_QUERY_LENGTH, PARSE_LIMITS, checkQueryShape } from './parse.js';
export { printQuery, quoteIdentifier, DEFAULT_LIMIT, MAX_LIMIT, type PrintOptions, type PrintedQuery } from './printer.js';
export { printHogQL, printHogQLExpr } from './print-hogql.js';
export { FUNCTION_NAMES, containsAggregate, containsAsterisk } from './functions.js';
export { TABLES } from './schema.js';
export { propertyFilterExprs, jsonPropertyExpr, jsonPropertyText, cohortIds, ELEMENT_KEYS, type FilterContext, type CohortDefinition, type CohortGroup } from './property-filter-expr.js';
export { actionExpr, projectAction, selectorRegex, matchesActionRefs, expandMatchesAction, STRING_MATCHINGS, type ActionDefinition, type ActionStep, type StringMatching } from './action-expr.js';
