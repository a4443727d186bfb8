import { randomUUID } from 'node:crypto';
import type { Fixture, StoredEvent } from './fixture.js';

/**
 * The May 2024 projects of the paths and web analytics oracles (`paths-cases.ts`, `web-cases.ts`):
 * their persons (ann, on two devices, to gus), each made afresh, and events written as specs in UTC.
 * A distinct id none of them has (the other project's `mallory`) keeps a person of its own.
 */
export type Props = Record<string, unknown>;
/** [UTC time, distinct id, event, properties] */
export type Spec = [string, string, string, Props?];

const PERSONS = ['ann', 'ben', 'cat', 'dev', 'eve', 'fay', 'gus'] as const;
const DISTINCT_IDS: Record<string, (typeof PERSONS)[number]> = { ann: 'ann', 'ann-phone': 'ann', ben: 'ben', cat: 'cat', dev: 'dev', eve: 'eve', fay: 'fay', gus: 'gus' };

export function mayFixture(specs: readonly Spec[]): Fixture {
  const personIds = Object.fromEntries(PERSONS.map((name) => [name, randomUUID()])) as Record<(typeof PERSONS)[number], string>;
  const stored = ([timestamp, distinctId, event, properties = {}]: Spec): StoredEvent => {
    const personId = DISTINCT_IDS[distinctId] ? personIds[DISTINCT_IDS[distinctId]] : randomUUID();
    return { distinctId, event, timestamp, ms: 0, properties, personProperties: {}, personId, group0: '' };
  };
  const batch = specs.map(stored);
  const persons = PERSONS.map((name) => ({ id: personIds[name], createdAt: '2024-05-01 00:00:00', properties: {}, version: 1 }));
  const distinctIds = Object.entries(DISTINCT_IDS).map(([distinctId, name]) => ({ distinctId, personId: personIds[name], version: 1, isDeleted: false }));
  return {
    world: {
      timezone: 'UTC',
      events: batch.map((e) => ({ event: e.event, distinctId: e.distinctId, time: Date.parse(`${e.timestamp.replace(' ', 'T')}Z`), properties: e.properties, personProperties: {}, storedPersonId: e.personId, group0: '' })),
      persons: persons.map((p) => ({ id: p.id, createdAt: Date.parse('2024-05-01T00:00:00Z'), properties: {}, version: 1 })),
      distinctIds,
    },
    batches: [batch],
    persons,
    distinctIds,
  };
}
