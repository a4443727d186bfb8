export type { Expr, BinaryOp } from './ast.js';
export { parseExpression, QueryLanguageError } from './parse.js';
export { compileExpression, ALLOWED_FUNCTIONS } from './compile.js';
export { propertyText, propertyNumber, propertyIsSet } from './property-sql.js';
export { compilePropertyFilters, propertyCondition, cohortIds, FILTER_OPERATORS, type PropertyFilter, type FilterContext } from './property-filter-sql.js';
export { parseDateInput } from './relative-date.js';
