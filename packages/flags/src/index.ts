export * from './definition.js';
export { hashFor, holdoutHash } from './hash.js';
export { matchProperty } from '@tributary/property-filters';
export { evaluateFlag, isCohortMember, type EvaluationContext, type FlagResult, type ReasonCode } from './evaluate-flag.js';
export { validateFlagDefinition, type DefinitionProblem } from './validate-definition.js';
export { storedDataNeeds, groupsToFetch, needsStoredPerson, type StoredDataNeeds } from './stored-data-needs.js';
