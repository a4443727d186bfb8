export * from './definition.js';
export { hashFor, holdoutHash } from './hash.js';
export { matchProperty } from '@tributary/property-filters';
export { evaluateFlag } from './evaluate-flag.js';
export { isCohortMember } from './cohort-membership.js';
export type { EvaluationContext } from './evaluation-context.js';
export type { FlagResult, ReasonCode } from './flag-result.js';
export { validateFlagDefinition, type DefinitionProblem } from './validate-definition.js';
export { storedDataNeeds, groupsToFetch, needsStoredPerson, type StoredDataNeeds } from './stored-data-needs.js';
