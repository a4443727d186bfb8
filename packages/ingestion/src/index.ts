export { computeTimestamp, type ComputedTimestamp, type TimestampInput, type TimestampWarning } from './compute-timestamp.js';
export { isIllegalDistinctId } from './illegal-distinct-id.js';
export {
  extractPersonUpdates,
  applyPersonUpdates,
  initialPersonProperties,
  INITIAL_PROPERTIES,
  type PersonUpdates,
  type Properties,
} from './person-property-updates.js';
export { planMerge, mergeIdsOf, IDENTIFYING_EVENTS, type MergePlan, type MergeRequest, type PersonSnapshot } from './merge-plan.js';
export { personlessPersonId, processesPersonProfile, stripPersonUpdates, PERSON_EVENTS } from './personless.js';
export { nextGroupTypeIndex, groupColumns, groupTypesOf, readGroupIdentify, mergeGroupProperties, MAX_GROUP_TYPES, type GroupColumns, type GroupIdentify } from './groups.js';
export { parseEvent, surveyWarning, type ParsedEvent, type RawEvent } from './parse-event.js';
export { planSplit, splitPersonUuid } from './split-plan.js';
export { groupByPersons, type GroupableEvent } from './person-groups.js';
export { applyChunk, chunkEventOf, NO_WARNINGS, type ChunkEvent, type ChunkPerson, type ChunkResult, type ChunkState, type EventOutcome, type PersonAfterEvent, type StoredPerson } from './person-chunk.js';
export { withGeoip, addressOf } from './geoip-enrichment.js';
export {
  DefinitionType,
  PROPERTY_TYPES,
  definesProperties,
  detectPropertyType,
  fitsDefinition,
  isPropertyObject,
  isSkippedEventProperty,
  linksToEvent,
  storableName,
  type PropertyType,
} from './definitions.js';
