export { personDisplayName } from './display-name.js';
export { propertyChanges, type PropertyChange } from './property-changes.js';
export { propertiesTimeline, type PersonPropertiesSample, type TimelinePoint } from './properties-timeline.js';
export { parseIdList, type IdListProblem } from './id-list.js';
export { PERSON_RECORD_COLUMNS, PERSON_RECORD_TEXT_COLUMNS, type PersonRecord } from './person-record.js';
export { parsePropertiesJson, propertiesJson } from './properties-json.js';
export { propertiesPatch, type PropertiesPatch } from './properties-patch.js';
export { samePropertyValue } from './same-property-value.js';
