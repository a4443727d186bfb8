import { propertiesJson } from '@tributary/persons';
import { TrackedCopies, type Redis, type TrackedCopiesOptions } from '@tributary/redis';

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
  private readonly copies: TrackedCopies<CachedPerson> | undefined;
  private readonly countCopyLookup: ((hit: boolean) => void) | undefined;

  /**
   * `localCopies` keeps the persons read in this process while Redis tracks them (see
   * TrackedCopies), so a person asked about again costs no round trip; `redis` must then be a
   * connection of this cache's own, reading nothing else. The copies are shared: never mutate them.
   * `countCopyLookup` is told, with `localCopies`, whether each lookup found a copy.
   */
  constructor(
    private readonly redis: Redis,
    options: { localCopies?: TrackedCopiesOptions; countCopyLookup?: (hit: boolean) => void } = {},
  ) {
    this.copies = options.localCopies ? new TrackedCopies(redis, options.localCopies) : undefined;
    this.countCopyLookup = options.countCopyLookup;
  }

  /** Resolves once persons read are kept in process (with `localCopies`). */
  async untilLocalCopies(): Promise<void> {
    await this.copies?.untilTracking();
  }

  /**
   * One person, read with the other lookups of the same event-loop turn in one MGET: under load
   * decide answers several requests a turn, and a command of its own for each cost a socket write
   * and a read each, the largest part of a request after the answer's own write.
   */
  get(teamId: number, distinctId: string): Promise<CachedPerson | null> {
    const k = key(teamId, distinctId);
    if (this.copies) {
      const copy = this.copies.get(k);
      this.countCopyLookup?.(copy !== undefined);
      if (copy) return Promise.resolve(copy);
    }
    return new Promise((resolve, reject) => {
      if (this.pending.push({ key: k, resolve, reject }) === 1) setImmediate(() => this.sendPending());
    });
  }

  private sendPending(): void {
    const lookups = this.pending;
    this.pending = [];
    const keys = lookups.map((lookup) => lookup.key);
    const read = this.copies?.beginRead(keys);
    this.redis.mget(keys).then(
      (values) => {
        const persons = lookups.map((lookup, i) => {
          const value = values[i];
          try {
            const person = value ? (JSON.parse(value) as CachedPerson) : null;
            lookup.resolve(person);
            return person;
          } catch (error) {
            lookup.reject(error);
            return null;
          }
        });
        this.copies?.endRead(read, persons);
      },
      (error: unknown) => {
        this.copies?.abandonRead(read);
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

  /** Stops keeping copies; the Redis connection given is the caller's to close. */
  close(): void {
    this.copies?.close();
  }
}
