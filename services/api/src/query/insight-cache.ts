import { createHash } from 'node:crypto';
import { sql, type ClickHouse } from '@tributary/clickhouse';
import { badRequest } from '@tributary/http';
import type { Redis } from '@tributary/redis';
import { LRUCache } from 'lru-cache';

/**
 * PostHog's `refresh` modes: `force_cache` answers from the cache or not at all, `blocking`
 * computes unless the cache holds an answer for the data as it is now, `force_blocking` always
 * computes. The async modes compute in the request too (there is no background queue for
 * queries), so `async` is `blocking` and `force_async` is `force_blocking`; the legacy booleans
 * are `force_blocking` (true) and `blocking` (false).
 */
export type RefreshMode = 'force_cache' | 'blocking' | 'force_blocking';

export function refreshMode(raw: unknown, fallback: RefreshMode, attr = 'refresh'): RefreshMode {
  if (raw === undefined || raw === null || raw === '') return fallback;
  switch (raw) {
    case 'force_cache':
    case 'blocking':
    case 'force_blocking':
      return raw as RefreshMode;
    case 'async':
    case 'lazy_async':
    case false:
    case 'false':
      return 'blocking';
    case 'force_async':
    case true:
    case 'true':
      return 'force_blocking';
    default:
      throw badRequest(`${attr} must be one of force_cache, blocking, force_blocking, async, force_async: ${JSON.stringify(raw)}.`, attr);
  }
}

/** What the cache adds to an answer, as PostHog names it. */
export interface CacheFields {
  is_cached: boolean;
  last_refresh: string | null;
  cache_key: string;
}

interface Entry {
  freshness: string;
  last_refresh: string;
  answer: Record<string, unknown>;
}

const TTL_S = 7 * 86_400;
/**
 * A project's data version is reused this long: it costs a scan of the project's inserted_at, as
 * much as a small insight. A reused older version can only make a new entry look staler than it
 * is, or serve an entry a few seconds after the data moved on.
 */
const VERSION_REUSE_MS = 5_000;

/**
 * Insight answers in Redis, keyed by the project, its timezone and the query (with the versions of
 * the cohorts it names: the caller's). An entry is fresh
 * while the project's data is as it was when it was computed (the same events and distinct-id
 * rows, by count and newest insertion) and within the same hour, since relative date ranges move
 * with the clock at most by the hour.
 */
export class InsightCache {
  private readonly versions = new LRUCache<number, Promise<string>>({ max: 10_000, ttl: VERSION_REUSE_MS });

  constructor(
    private readonly deps: { redis: Redis; clickhouse: ClickHouse; clock: () => Date },
  ) {}

  cacheKey(project: { id: number; timezone: string }, query: unknown): string {
    const digest = createHash('sha256').update(stableJson([project.timezone, query])).digest('hex').slice(0, 40);
    return `insight-cache:${project.id}:${digest}`;
  }

  /** The answer by `mode`: `null` only for `force_cache` with nothing cached. */
  async answer<T extends object>(project: { id: number; timezone: string }, query: unknown, mode: RefreshMode, compute: () => Promise<T>): Promise<(T & CacheFields) | (CacheFields & { answer: null })> {
    const key = this.cacheKey(project, query);
    const cached = mode === 'force_blocking' ? null : await this.read(key);
    if (mode === 'force_cache') {
      return cached ? { ...(cached.answer as T), is_cached: true, last_refresh: cached.last_refresh, cache_key: key } : { answer: null, is_cached: false, last_refresh: null, cache_key: key };
    }
    // The data version is read as the computation starts, not before it: begun first, it sees no
    // more data than the computation does, so an entry is never marked fresher than its answer.
    const reading = this.freshness(project.id);
    if (cached) {
      const freshness = await reading;
      if (cached.freshness === freshness) return { ...(cached.answer as T), is_cached: true, last_refresh: cached.last_refresh, cache_key: key };
    }
    const [freshness, computed] = await Promise.all([reading, compute()]);
    const lastRefresh = this.deps.clock().toISOString();
    const entry: Entry = { freshness, last_refresh: lastRefresh, answer: { ...computed, is_cached: undefined, last_refresh: undefined } };
    await this.deps.redis.set(key, JSON.stringify(entry), 'EX', TTL_S);
    return { ...computed, is_cached: false, last_refresh: lastRefresh, cache_key: key };
  }

  private async read(key: string): Promise<Entry | null> {
    const raw = await this.deps.redis.get(key);
    return raw ? (JSON.parse(raw) as Entry) : null;
  }

  /** The project's data version, read at most every VERSION_REUSE_MS; a failed read is not kept. */
  private freshness(teamId: number): Promise<string> {
    let version = this.versions.get(teamId);
    if (!version) {
      version = this.readFreshness(teamId);
      this.versions.set(teamId, version);
      version.catch(() => this.versions.delete(teamId));
    }
    return version;
  }

  /** The project's data version: changes with every stored event and every merge or identify (a new distinct-id row). */
  private async readFreshness(teamId: number): Promise<string> {
    const [row] = await this.deps.clickhouse.query<{ events: string; newest: string; distinct_ids: string }>(
      sql`SELECT count() AS events, toString(max(inserted_at)) AS newest,
            (SELECT count() FROM person_distinct_id WHERE team_id = ${teamId}) AS distinct_ids
          FROM events WHERE team_id = ${teamId}`,
    );
    const hour = this.deps.clock().toISOString().slice(0, 13);
    return `${row?.events}:${row?.newest}:${row?.distinct_ids}:${hour}`;
  }
}

/** JSON with object keys sorted, so equal queries written in another key order share an entry. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}
