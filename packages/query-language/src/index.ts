export type { Expr, BinaryOp } from './ast.js';
export { parseExpression, MAX_EXPRESSION_DEPTH, QueryLanguageError } from './parse.js';
export { compileExpression, ALLOWED_FUNCTIONS } from './compile.js';
export { compilePropertyFilters, cohortIds, type FilterContext } from './property-filter-sql.js';
export { parseDateInput } from '@tributary/property-filters';
