/** One event's view of its person: the person properties ingest recorded on it. */
export interface PersonPropertiesSample {
  timestamp: string;
  properties: Record<string, unknown>;
}

export interface TimelinePoint {
  /** When these properties took effect: the first event that carried them. */
  timestamp: string;
  properties: Record<string, unknown>;
  relevant_event_count: number;
  start_event_timestamp: string;
  end_event_timestamp: string;
}

const canonical = (value: unknown): string =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? `{${Object.keys(value as Record<string, unknown>)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
        .join(',')}}`
    : JSON.stringify(value);

/**
 * Collapses a person's events, oldest first, into the points where its properties changed: each
 * point holds the properties from then on and the range of events that saw them. Key order does
 * not count as a change, since ingest may write the same properties with keys in another order.
 */
export function propertiesTimeline(samples: readonly PersonPropertiesSample[]): TimelinePoint[] {
  const points: TimelinePoint[] = [];
  let current: { point: TimelinePoint; key: string } | null = null;
  for (const sample of samples) {
    const key = canonical(sample.properties);
    if (current && current.key === key) {
      current.point.relevant_event_count += 1;
      current.point.end_event_timestamp = sample.timestamp;
      continue;
    }
    const point: TimelinePoint = {
      timestamp: sample.timestamp,
      properties: sample.properties,
      relevant_event_count: 1,
      start_event_timestamp: sample.timestamp,
      end_event_timestamp: sample.timestamp,
    };
    points.push(point);
    current = { point, key };
  }
  return points;
}
