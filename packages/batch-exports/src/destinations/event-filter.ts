import type { EncodedEvent, ExportModel, ExportRecord } from './export-part.js';

/** PostHog's event filter fields, shared by every destination's config. */
export interface EventFilterConfig {
  /** Only these events, when the list is not empty. */
  include_events: string[] | null;
  /** Never these events. */
  exclude_events: string[] | null;
}

export const EVENT_FILTER_SCHEMA_PROPERTIES = {
  include_events: { type: 'array', items: { type: 'string' }, nullable: true, default: null },
  exclude_events: { type: 'array', items: { type: 'string' }, nullable: true, default: null },
} as const;

/** Which records of a part a destination writes: persons are never filtered, events by name. */
export function eventFilter(model: ExportModel, config: EventFilterConfig): (record: ExportRecord) => boolean {
  const include = config.include_events?.length ? new Set(config.include_events) : null;
  const exclude = new Set(config.exclude_events ?? []);
  if (model !== 'events' || (include === null && exclude.size === 0)) return () => true;
  return (record) => {
    const event = String(record.event);
    return (include === null || include.has(event)) && !exclude.has(event);
  };
}

/** `eventFilter` for events ClickHouse encoded: their names are compared as the JSON literals they are given as. */
export function encodedEventFilter(config: EventFilterConfig): (event: EncodedEvent) => boolean {
  const literals = (names: string[] | null) => new Set((names ?? []).map((name) => JSON.stringify(name)));
  const include = config.include_events?.length ? literals(config.include_events) : null;
  const exclude = literals(config.exclude_events);
  if (include === null && exclude.size === 0) return () => true;
  return ({ event }) => {
    const name = event.toString();
    return (include === null || include.has(name)) && !exclude.has(name);
  };
}
