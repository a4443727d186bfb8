/**
 * What an event tells the project's data model: its event name and each property key, with the
 * type PostHog infers from the first value it records (its property-defs service's rules).
 */

/** The property types PostHog infers; `Duration` exists there but is never inferred. */
export type PropertyType = 'DateTime' | 'String' | 'Numeric' | 'Boolean';
export const PROPERTY_TYPES: readonly PropertyType[] = ['DateTime', 'String', 'Numeric', 'Boolean'];

/** PostHog's PropertyDefinition.Type: whose property a definition is. */
export const DefinitionType = { event: 1, person: 2, group: 3 } as const;
export type DefinitionType = (typeof DefinitionType)[keyof typeof DefinitionType];

/** Events ingestion makes for itself: they define their name only. */
const EVENTS_WITHOUT_PROPERTIES = new Set(['$$plugin_metrics']);

/** Keys that carry updates or group links rather than describe the event, as PostHog skips them. */
const SKIPPED_EVENT_PROPERTIES = new Set(['$set', '$set_once', '$unset', '$groups', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4']);

/**
 * Keys on nearly every event whose pairing with each event name says nothing (flags are global):
 * their property definitions are kept, their event-property links not, as PostHog does.
 */
const UNLINKED_PREFIXES = ['$feature/', '$feature_enrollment/'];

/** Longer names are not recorded: PostHog's column holds half its 400 characters. */
const MAX_DEFINITION_NAME_LENGTH = 200;

const DATETIME_KEY_KEYWORDS = ['time', 'timestamp', 'date', '_at', '-at', 'createdat', 'updatedat'];

/** A number is taken for a Unix time in seconds when it is no older than this. */
const SIX_MONTHS_S = 15_768_000;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const RFC2822 = /^((Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s*)?\d{1,2}\s+(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{4}\s+\d{2}:\d{2}(:\d{2})?\s+([+-]\d{4}|UT|GMT|[A-Z]{3})$/;
/** A date (year first or last) optionally followed by a time: a strong hint of intent, as PostHog reads it. */
const DATETIME_PREFIX = /^((\d{4}[/-][0-2]\d[/-][0-3]\d)|([0-2]\d[/-][0-3]\d[/-]\d{4}))([ T][0-2]\d:[0-6]\d:[0-6]\d.*)?$/;

function isLikelyDateString(s: string): boolean {
  return RFC3339.test(s) || RFC2822.test(s) || DATETIME_PREFIX.test(s);
}

function isLikelyUnixTimestamp(n: number, nowS: number): boolean {
  return Number.isInteger(n) && n >= 0 && n >= nowS - SIX_MONTHS_S;
}

/**
 * The type PostHog gives a property from its key and one value; null for null, arrays and objects.
 * Key prefixes whose first values mislead (utm codes that look like numbers, flag values that are
 * sometimes booleans, survey answers) are always String; a key that names a time holds a DateTime
 * when its value reads as a date or a recent Unix time; otherwise the value decides.
 */
export function detectPropertyType(rawKey: string, value: unknown, nowS: number): PropertyType | null {
  const key = rawKey.toLowerCase();
  if (key.startsWith('utm_') || key.startsWith('$initial_utm_') || key.startsWith('$feature/') || key === '$feature_flag_response' || key.startsWith('$survey_response')) return 'String';
  if (DATETIME_KEY_KEYWORDS.some((kw) => key.includes(kw))) {
    if (typeof value === 'string' && isLikelyDateString(value)) return 'DateTime';
    if (typeof value === 'number' && isLikelyUnixTimestamp(value, nowS)) return 'DateTime';
  }
  if (typeof value === 'string') {
    const s = value.trim();
    if (s === 'true' || s === 'false' || s === 'TRUE' || s === 'FALSE') return 'Boolean';
    return isLikelyDateString(s) ? 'DateTime' : 'String';
  }
  if (typeof value === 'number') return Number.isFinite(value) ? 'Numeric' : null;
  if (typeof value === 'boolean') return 'Boolean';
  return null;
}

/** Whether a name can be recorded: not too long for the definitions' columns. */
export const fitsDefinition = (name: string): boolean => name.length <= MAX_DEFINITION_NAME_LENGTH;

/** Postgres text cannot hold NUL; PostHog stores U+FFFD in its place. */
export const storableName = (name: string): string => (name.includes('\u0000') ? name.replaceAll('\u0000', '\uFFFD') : name);

/** Whether the event's properties define anything (besides its name). */
export const definesProperties = (event: string): boolean => !EVENTS_WITHOUT_PROPERTIES.has(event);

/** Whether an event property key is one of the update or group keys PostHog leaves out of definitions. */
export const isSkippedEventProperty = (key: string): boolean => SKIPPED_EVENT_PROPERTIES.has(key);

/** Whether an event property's definition is linked to the event name it was seen on. */
export const linksToEvent = (key: string): boolean => !UNLINKED_PREFIXES.some((prefix) => key.startsWith(prefix));

/** Whether `$set`, `$set_once` or `$group_set` holds properties (an object, not a list). */
export const isPropertyObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
