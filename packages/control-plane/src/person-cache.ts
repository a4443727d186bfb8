import { propertiesJson } from '@tributary/persons';
import { TrackedCopies, type Redis, type TrackedCopiesOptions } from '@tributary/redis';

export interface CachedPerson {
  personId: number;
  personUuid: string;
  properties: Record<string, unknown>;
}

const key = (teamId: number, distinctId: string) => `tributary:person:${teamId}:${distinctId}`;
const TTL_SECONDS = 7 * 24 * 3600;

/**
 * Stores persons under all their keys: KEYS are every person's keys in turn, ARGV[1] the TTL,
 * then for each person how many of the next KEYS are its own, and its value.
 */
const SET_PERSONS_SCRIPT = `
local at = 1
for i = 2, #ARGV, 2 do
  local last = at + tonumber(ARGV[i]) - 1
  for k = at, last do redis.call('SET', KEYS[k], ARGV[i + 1], 'EX', ARGV[1]) end
  at = last + 1
end
return at - 1
`;

type SetPersonsCommand = (numberOfKeys: number, ...keysThenArguments: (string | number)[]) => Promise<number>;

/**
 * Persons per script call: a call runs alone in Redis, so it is kept to about a millisecond,
 * under what decide's answers may wait.
 */
const PERSONS_PER_CALL = 250;

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
   * The person's copy in this process (with `localCopies`), without waiting; undefined when
   * there is none, and `get` must ask Redis. The lookup is counted as `get` counts it.
   */
  copy(teamId: number, distinctId: string): CachedPerson | undefined {
    if (!this.copies) return undefined;
    const copy = this.copies.get(key(teamId, distinctId));
    if (copy) this.countCopyLookup?.(true);
    return copy;
  }

  /**
   * One person, read with the other lookups of the same event-loop turn in one MGET: under load
   * decide answers several requests a turn, and a command of its own for each cost a socket write
   * and a read each, the largest part of a request after the answer's own write.
   */
  get(teamId: number, distinctId: string): Promise<CachedPerson | null> {
    const copy = this.copy(teamId, distinctId);
    if (copy) return Promise.resolve(copy);
    if (this.copies) this.countCopyLookup?.(false);
    const k = key(teamId, distinctId);
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

  /**
   * Several persons in one round trip, as a few script calls rather than a SET per distinct id:
   * ingest writes a chunk's thousands of persons at once, and a client command each cost it more
   * CPU than Redis spent on them.
   */
  async setMany(entries: readonly { teamId: number; distinctIds: readonly string[]; person: CachedPerson }[]): Promise<void> {
    if (!('tributarySetPersons' in this.redis)) this.redis.defineCommand('tributarySetPersons', { lua: SET_PERSONS_SCRIPT });
    const setPersons = (this.redis as unknown as { tributarySetPersons: SetPersonsCommand }).tributarySetPersons.bind(this.redis);
    const calls: Promise<number>[] = [];
    for (let start = 0; start < entries.length; start += PERSONS_PER_CALL) {
      const keys: string[] = [];
      const values: (string | number)[] = [TTL_SECONDS];
      for (const { teamId, distinctIds, person } of entries.slice(start, start + PERSONS_PER_CALL)) {
        if (distinctIds.length === 0) continue;
        for (const id of distinctIds) keys.push(key(teamId, id));
        values.push(distinctIds.length, `{"personId":${person.personId},"personUuid":${JSON.stringify(person.personUuid)},"properties":${propertiesJson(person.properties)}}`);
      }
      if (keys.length > 0) calls.push(setPersons(keys.length, ...keys, ...values));
    }
    await Promise.all(calls);
  }

  async forget(teamId: number, distinctIds: readonly string[]): Promise<void> {
    if (distinctIds.length > 0) await this.redis.del(...distinctIds.map((id) => key(teamId, id)));
  }

  /**
   * Every cached person of a project, for a project that is gone: its keys are found with SCAN
   * (about a thousand slots a step, so Redis is never held up) and removed with UNLINK. Returns how many.
   */
  async forgetProject(teamId: number): Promise<number> {
    let removed = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', key(teamId, '*'), 'COUNT', 1000);
      if (keys.length > 0) removed += await this.redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
    return removed;
  }

  /** Stops keeping copies; the Redis connection given is the caller's to close. */
  close(): void {
    this.copies?.close();
  }
}
