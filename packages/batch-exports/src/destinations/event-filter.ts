import type { ExportModel, ExportRecord } from './export-part.js';

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
