import { propertiesJson } from '@tributary/persons';
import type { Redis } from '@tributary/redis';

export interface CachedPerson {
  personId: number;
  personUuid: string;
  properties: Record<string, unknown>;
}

const key = (teamId: number, distinctId: string) => `tributary:person:${teamId}:${distinctId}`;
const TTL_SECONDS = 7 * 24 * 3600;

interface Lookup {
  key: string;
  resolve: (person: CachedPerson | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Person properties by distinct id for decide, written by ingest whenever a person changes.
 * A cache only: a miss or an unreachable Redis sends decide to Postgres.
 */
export class PersonCache {
  /** Lookups made in this turn of the event loop, sent together when it ends. */
  private pending: Lookup[] = [];

  constructor(private readonly redis: Redis) {}

  /**
   * One person, read with the other lookups of the same event-loop turn in one MGET: under load
   * decide answers several requests a turn, and a command of its own for each cost a socket write
   * and a read each, the largest part of a request after the answer's own write.
   */
  get(teamId: number, distinctId: string): Promise<CachedPerson | null> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ key: key(teamId, distinctId), resolve, reject }) === 1) setImmediate(() => this.sendPending());
    });
  }

  private sendPending(): void {
    const lookups = this.pending;
    this.pending = [];
    this.redis.mget(lookups.map((lookup) => lookup.key)).then(
      (values) => {
        lookups.forEach((lookup, i) => {
          const value = values[i];
          try {
            lookup.resolve(value ? (JSON.parse(value) as CachedPerson) : null);
          } catch (error) {
            lookup.reject(error);
          }
        });
      },
      (error: unknown) => {
        for (const lookup of lookups) lookup.reject(error);
      },
    );
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
