import type { PersonCache } from '@tributary/control-plane';
import { setOwn } from '@tributary/payload';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import type { DecideMetrics } from './decide-metrics.js';

export interface StoredPerson {
  personId: number;
  properties: Record<string, unknown>;
}

/** Ids remembered as having no person, at most; past it the oldest are forgotten first. */
const UNKNOWN_MAX_ENTRIES = 50_000;

/**
 * The stored data flags need: person properties (Redis cache first, Postgres on a miss), listed
 * cohort membership (static and precomputed), group properties and continuity overrides. Every
 * read is bounded by the pool's statement timeout, so an unreachable store costs a bounded
 * delay, then an error.
 */
export class EvaluationData {
  /** `team:distinct id` -> when to look again, for ids Redis and Postgres both said have no person. */
  private readonly unknown = new Map<string, number>();
  private readonly unknownTtlMs: number;
  private readonly clock: () => number;

  /**
   * `unknownTtlMs`: how long an id with no person is remembered as such. Anonymous visitors are
   * most of the ids SDKs ask about, and each would otherwise cost a Postgres read on every
   * request. A person ingest creates for such an id reaches the Redis cache, which is asked
   * first, so it is seen at once; only when that cache write failed does it wait this long.
   */
  constructor(private readonly deps: { pool: Pool; personCache: PersonCache; logger: Logger; metrics?: DecideMetrics; unknownTtlMs?: number; clock?: () => number }) {
    this.unknownTtlMs = deps.unknownTtlMs ?? 5_000;
    this.clock = deps.clock ?? Date.now;
  }

  /** The person when this process holds a copy, without waiting; undefined when `person` must be awaited. */
  knownPerson(teamId: number, distinctId: string): StoredPerson | undefined {
    const copy = this.deps.personCache.copy(teamId, distinctId);
    if (!copy) return undefined;
    this.deps.metrics?.cacheLookup('person_properties', true);
    return { personId: copy.personId, properties: copy.properties };
  }

  async person(teamId: number, distinctId: string): Promise<StoredPerson | null> {
    const cached = await this.deps.personCache.get(teamId, distinctId).catch(() => null);
    this.deps.metrics?.cacheLookup('person_properties', cached !== null);
    if (cached) return { personId: cached.personId, properties: cached.properties };
    // Asked after the cache: ingest puts a person it creates there, so a visitor who has just
    // been identified is seen at once rather than after the unknown id is forgotten.
    const key = `${teamId}:${distinctId}`;
    const until = this.unknown.get(key);
    const remembered = until !== undefined && until > this.clock();
    this.deps.metrics?.cacheLookup('unknown_distinct_ids', remembered);
    if (remembered) return null;
    if (until !== undefined) this.unknown.delete(key);
    const { rows } = await this.deps.pool.query<{ id: number; properties: Record<string, unknown> }>(
      'SELECT p.id, p.properties FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = $1 AND d.distinct_id = $2',
      [teamId, distinctId],
    );
    const row = rows[0];
    if (row) return { personId: row.id, properties: row.properties };
    if (this.unknown.size >= UNKNOWN_MAX_ENTRIES) this.unknown.delete(this.unknown.keys().next().value!);
    this.unknown.set(key, this.clock() + this.unknownTtlMs);
    return null;
  }

  /**
   * The cohorts listing the person: static ones, and precomputed ones in the version the worker
   * last finished (the cohort's `version`), so a recalculation half-written is never read.
   */
  async listedCohortIds(personId: number): Promise<Set<number>> {
    const { rows } = await this.deps.pool.query<{ cohort_id: number }>(
      `SELECT cohort_id FROM cohort_people WHERE person_id = $1
       UNION ALL
       SELECT m.cohort_id FROM cohort_calculated_people m JOIN cohorts c ON c.id = m.cohort_id AND c.version = m.version WHERE m.person_id = $1`,
      [personId],
    );
    return new Set(rows.map((r) => r.cohort_id));
  }

  /** Properties of the request's groups, by group type name. */
  async groupProperties(teamId: number, groups: Record<string, string>, typeIndexes: Record<string, number>): Promise<Record<string, Record<string, unknown>>> {
    const wanted = Object.entries(groups).filter(([type]) => typeIndexes[type] !== undefined);
    if (wanted.length === 0) return {};
    const { rows } = await this.deps.pool.query<{ group_type_index: number; group_key: string; properties: Record<string, unknown> }>(
      `SELECT group_type_index, group_key, properties FROM groups
        WHERE team_id = $1 AND (group_type_index, group_key) IN (SELECT * FROM unnest($2::smallint[], $3::text[]))`,
      [teamId, wanted.map(([type]) => typeIndexes[type]), wanted.map(([, key]) => key)],
    );
    const out: Record<string, Record<string, unknown>> = {};
    for (const [type, key] of wanted) {
      const row = rows.find((r) => r.group_type_index === typeIndexes[type] && r.group_key === key);
      if (row) setOwn(out, type, row.properties);
    }
    return out;
  }

  /**
   * Experience continuity: the first anonymous id a person was seen with keeps deciding the
   * person's bucket for flags that ask for it. Existing overrides are never replaced.
   */
  async hashKeyOverrides(teamId: number, personId: number, anonDistinctId: string | null, flagKeys: string[]): Promise<Record<string, string>> {
    if (flagKeys.length === 0) return {};
    if (anonDistinctId) {
      await this.deps.pool.query(
        `INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key)
         SELECT $1, $2, unnest($3::text[]), $4 ON CONFLICT DO NOTHING`,
        [teamId, personId, flagKeys, anonDistinctId],
      );
    }
    const { rows } = await this.deps.pool.query<{ feature_flag_key: string; hash_key: string }>(
      'SELECT feature_flag_key, hash_key FROM feature_flag_hash_key_overrides WHERE team_id = $1 AND person_id = $2',
      [teamId, personId],
    );
    return Object.fromEntries(rows.map((r) => [r.feature_flag_key, r.hash_key]));
  }
}
