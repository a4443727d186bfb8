import { propertiesJson } from '@tributary/persons';
import type { Redis } from '@tributary/redis';

export interface CachedPerson {
  personId: number;
  personUuid: string;
  properties: Record<string, unknown>;
}

const key = (teamId: number, distinctId: string) => `tributary:person:${teamId}:${distinctId}`;
const TTL_SECONDS = 7 * 24 * 3600;

/**
 * Person properties by distinct id for decide, written by ingest whenever a person changes.
 * A cache only: a miss or an unreachable Redis sends decide to Postgres.
 */
export class PersonCache {
  constructor(private readonly redis: Redis) {}

  async get(teamId: number, distinctId: string): Promise<CachedPerson | null> {
    const value = await this.redis.get(key(teamId, distinctId));
    return value ? (JSON.parse(value) as CachedPerson) : null;
  }

  async set(teamId: number, distinctIds: readonly string[], person: CachedPerson): Promise<void> {
    await this.setMany([{ teamId, distinctIds, person }]);
  }

  /** Several persons in one round trip. */
  async setMany(entries: readonly { teamId: number; distinctIds: readonly string[]; person: CachedPerson }[]): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const { teamId, distinctIds, person } of entries) {
      const value = `{"personId":${person.personId},"personUuid":${JSON.stringify(person.personUuid)},"properties":${propertiesJson(person.properties)}}`;
      for (const id of distinctIds) pipeline.set(key(teamId, id), value, 'EX', TTL_SECONDS);
    }
    if (pipeline.length > 0) await pipeline.exec();
  }

  async forget(teamId: number, distinctIds: readonly string[]): Promise<void> {
    if (distinctIds.length > 0) await this.redis.del(...distinctIds.map((id) => key(teamId, id)));
  }
}
