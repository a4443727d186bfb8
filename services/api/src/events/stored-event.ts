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

export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.id,
    distinct_id: row.distinct_id,
    properties: row.properties,
    event: row.event,
    timestamp: isoTimestamp(row.timestamp, Number(row.timestamp_ms)),
    person: JSON.stringify({ id: row.person_id, distinct_ids: [row.distinct_id], properties: JSON.parse(row.person_properties || '{}') }),
    // Autocapture elements are stored as their chain; the parsed list is not kept separately.
    elements: '[]',
    elements_chain: row.elements_chain,
  };
}
