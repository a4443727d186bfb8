export * from './definition.js';
export { hashFor, holdoutHash } from './hash.js';
export { matchProperty } from './property-match.js';
export { evaluateFlag, isCohortMember, type EvaluationContext, type FlagResult, type ReasonCode } from './evaluate-flag.js';
export { validateFlagDefinition, type DefinitionProblem } from './validate-definition.js';
export { parseFlagDate } from './relative-date.js';
