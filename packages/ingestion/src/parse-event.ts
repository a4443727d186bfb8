import type { CaptureMessage } from '@tributary/kafka';
import { assignOwn } from '@tributary/payload';
import { parseStorableJson, storableText } from './storable-text.js';

/** The event fields ingest reads from a message's `data`. */
export interface RawEvent {
  event: string;
  distinct_id: string;
  uuid: string;
  properties: Record<string, unknown>;
  timestamp?: unknown;
  offset?: unknown;
  $set?: unknown;
  $set_once?: unknown;
  $unset?: unknown;
  elements_chain?: unknown;
}

export type ParsedEvent = { kind: 'ok'; event: RawEvent } | { kind: 'drop'; reason: string } | { kind: 'dlq'; reason: string };

/**
 * Reads a message's event, its text made storable (see `storableText`); what capture should
 * never have published goes to the dead-letter topic.
 */
export function parseEvent(message: CaptureMessage): ParsedEvent {
  let data: unknown;
  try {
    data = parseStorableJson(message.data);
  } catch (error) {
    return { kind: 'dlq', reason: `event data is not JSON: ${(error as Error).message}` };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { kind: 'dlq', reason: 'event data is not an object' };
  const raw = data as Record<string, unknown>;
  if (typeof raw.event !== 'string' || raw.event === '') return { kind: 'drop', reason: 'missing event name' };
  const properties = raw.properties;
  if (properties !== undefined && properties !== null && (typeof properties !== 'object' || Array.isArray(properties))) {
    return { kind: 'dlq', reason: 'event properties are not an object' };
  }
  // The parsed object is this event's alone, so it becomes the event in place: a copy would cost
  // every event a spread of its fields, which V8 does slowly.
  const { $set, $set_once } = raw;
  delete raw.$set;
  delete raw.$set_once;
  raw.distinct_id = storableText(message.distinct_id);
  raw.uuid = message.uuid;
  raw.properties = withTopLevelUpdates((properties as Record<string, unknown> | null) ?? {}, { $set, $set_once });
  return { kind: 'ok', event: raw as unknown as RawEvent };
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * SDKs may send `$set` and `$set_once` beside `properties` (posthog-js does for `$identify`); like
 * PostHog, the stored event keeps them in its properties, the top level winning key by key.
 */
function withTopLevelUpdates(properties: Record<string, unknown>, topLevel: { $set: unknown; $set_once: unknown }): Record<string, unknown> {
  for (const key of ['$set', '$set_once'] as const) {
    const top = topLevel[key];
    if (!isObject(top)) continue;
    const inner = properties[key];
    properties[key] = assignOwn(isObject(inner) ? inner : {}, top);
  }
  return properties;
}

const SURVEY_EVENTS = new Set(['survey sent', 'survey shown', 'survey dismissed']);

/**
 * posthog-js names each answer `$survey_response_<question id>`, and the first question's also
 * `$survey_response` only in its older shape, so any of these counts as the response.
 */
const hasSurveyResponse = (properties: Record<string, unknown>) => Object.keys(properties).some((key) => key === '$survey_response' || key.startsWith('$survey_response_'));

/**
 * Survey events are stored either way; one without `$survey_id`, or a `survey sent` without a
 * response, gets a warning naming the missing property.
 */
export function surveyWarning(event: RawEvent): { type: string; details: Record<string, unknown> } | null {
  if (!SURVEY_EVENTS.has(event.event)) return null;
  const missing = !event.properties.$survey_id ? '$survey_id' : event.event === 'survey sent' && !hasSurveyResponse(event.properties) ? '$survey_response' : null;
  return missing && { type: 'missing_survey_property', details: { event: event.event, missingProperty: missing } };
}
