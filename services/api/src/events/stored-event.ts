import { chainToElements } from './elements-chain.js';

/** A row as the events query returns it. */
export interface EventRow {
  id: string;
  event: string;
  distinct_id: string;
  properties: string;
  timestamp: string;
  timestamp_ms: number;
  elements_chain: string;
  person_id: string;
  person_properties: string;
}

/** The spec's stored event: every field is a string; objects are JSON text. */
export interface StoredEvent {
  id: string;
  distinct_id: string;
  properties: string;
  event: string;
  timestamp: string;
  person: string;
  elements: string;
  elements_chain: string;
}

/** ClickHouse's `YYYY-MM-DD hh:mm:ss` (UTC) plus the separate milliseconds, as ISO 8601. */
export function isoTimestamp(dateTime: string, milliseconds: number): string {
  return `${dateTime.replace(' ', 'T')}.${String(milliseconds).padStart(3, '0')}Z`;
}

/** The person a distinct id belongs to now. */
export interface CurrentPerson {
  uuid: string;
  properties: Record<string, unknown>;
}

/**
 * `current` is the event's distinct id's person now, as PostHog's events API shows it: a person
 * merged after the event names the survivor, not the person the row recorded. A distinct id with
 * no person (a personless event's) shows the row's.
 */
export function toStoredEvent(row: EventRow, current: CurrentPerson | undefined): StoredEvent {
  const person = current
    ? { id: current.uuid, distinct_ids: [row.distinct_id], properties: current.properties }
    : { id: row.person_id, distinct_ids: [row.distinct_id], properties: JSON.parse(row.person_properties || '{}') };
  return {
    id: row.id,
    distinct_id: row.distinct_id,
    properties: row.properties,
    event: row.event,
    timestamp: isoTimestamp(row.timestamp, Number(row.timestamp_ms)),
    person: JSON.stringify(person),
    elements: JSON.stringify(chainToElements(row.elements_chain)),
    elements_chain: row.elements_chain,
  };
}
