/**
 * The event topics, defined once. Every producer and consumer takes names from here, so
 * capture and ingest cannot drift apart.
 */
export const TOPIC_KINDS = ['realtime', 'historical', 'overflow', 'deadLetter'] as const;
export type TopicKind = (typeof TOPIC_KINDS)[number];

const BASE_NAMES: Record<TopicKind, string> = {
  realtime: 'events_realtime',
  historical: 'events_historical',
  overflow: 'events_overflow',
  deadLetter: 'events_dead_letter',
};

export type TopicNames = Record<TopicKind, string>;

/** Topic names under a prefix (empty in production; unique per test run to isolate tests). */
export function topicNames(prefix = ''): TopicNames {
  const names = {} as TopicNames;
  for (const kind of TOPIC_KINDS) names[kind] = `${prefix}${BASE_NAMES[kind]}`;
  return names;
}

/** Message key that keeps one person's events in order on one partition. */
export function messageKey(token: string, distinctId: string): string {
  return `${token}:${distinctId}`;
}
