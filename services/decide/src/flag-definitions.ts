import type { Redis } from '@tributary/redis';
import { FLAGS_CHANGED_CHANNEL, groupTypeIndexes, type FeatureFlagRecord, type FeatureFlagStore } from '@tributary/control-plane';
import { cohortDefinitions, storedDataNeeds, type CohortDefinition, type FlagDefinition, type StoredCohort, type StoredDataNeeds } from '@tributary/flags';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import type { DecideMetrics } from './decide-metrics.js';

export interface ProjectFlags {
  flags: FlagDefinition[];
  records: FeatureFlagRecord[];
  groupTypeMapping: Record<number, string>;
  /** The mapping the other way: group type name -> index. */
  groupTypeIndexes: Record<string, number>;
  /** Keys of the active flags that ask for experience continuity. */
  continuityKeys: string[];
  cohorts: Map<number, CohortDefinition>;
  cohortFilters: Record<string, unknown>;
  /** Which stored data these flags read, so a request fetches nothing they do not. */
  needs: StoredDataNeeds;
  loadedAt: number;
}

interface CacheEntry {
  current: Promise<ProjectFlags>;
  /** What `current` gave, once it has. */
  value: ProjectFlags | null;
  refreshing: boolean;
}

/**
 * Flag definitions per project, held in memory. The store that writes a change announces it on a
 * Redis channel (see announceFlagChange), which drops the project's entry at once on every
 * replica (and every worker); entries are also reloaded after `maxAgeMs`, in case an
 * announcement was missed while Redis was away.
 */
export class FlagDefinitions {
  private readonly cache = new Map<number, CacheEntry>();
  /** Each project's last loaded definitions, answered with when a reload fails (Postgres away). */
  private readonly lastLoaded = new Map<number, ProjectFlags>();
  private subscriber: Redis | null = null;

  constructor(
    private readonly deps: { pool: Pool; flags: Pick<FeatureFlagStore, 'liveForTeam'>; logger: Logger; metrics?: DecideMetrics },
    private readonly maxAgeMs = 30_000,
    private readonly clock: () => number = Date.now,
  ) {}

  async subscribe(subscriber: Redis): Promise<void> {
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, teamId: string) => this.cache.delete(Number(teamId)));
    await subscriber.subscribe(FLAGS_CHANGED_CHANNEL);
  }

  /**
   * The project's definitions when they are held, without waiting (a reload past their age
   * starts as in `forProject`); undefined when `forProject` must be awaited. For the hot path,
   * where awaiting costs a turn of the microtask queue on every request.
   */
  loaded(teamId: number): ProjectFlags | undefined {
    const entry = this.cache.get(teamId);
    return entry?.value ? this.served(teamId, entry, entry.value) : undefined;
  }

  /** An entry's definitions, counted as a hit. */
  private served(teamId: number, entry: CacheEntry, value: ProjectFlags): ProjectFlags {
    this.deps.metrics?.cacheLookup('flag_definitions', true);
    // Past its age the entry is still served while one reload runs, so no request waits on Postgres.
    if (this.clock() - value.loadedAt >= this.maxAgeMs && !entry.refreshing) this.refresh(teamId, entry);
    return value;
  }

  async forProject(teamId: number): Promise<ProjectFlags> {
    const entry = this.cache.get(teamId);
    if (entry) {
      const value = await entry.current.catch(() => null);
      if (value) return this.served(teamId, entry, value);
      this.deps.metrics?.cacheLookup('flag_definitions', false);
      if (this.cache.get(teamId) === entry) this.cache.delete(teamId);
    } else {
      this.deps.metrics?.cacheLookup('flag_definitions', false);
    }
    const current = this.load(teamId);
    const loaded: CacheEntry = { current, value: null, refreshing: false };
    this.cache.set(teamId, loaded);
    current.then(
      (value) => {
        loaded.value = value;
      },
      () => {
        if (this.cache.get(teamId) === loaded) this.cache.delete(teamId);
      },
    );
    // After an announcement dropped the entry, a failed reload answers with the definitions as
    // they were: flags evaluated a change late beat no flags at all, and the next request retries.
    return current.catch((error: unknown) => {
      const last = this.lastLoaded.get(teamId);
      if (!last) throw error;
      this.deps.logger.warn({ err: error, teamId }, 'flag definitions not reloaded; serving the previous ones');
      return last;
    });
  }

  /** An announcement that arrives meanwhile drops the entry, and the reload's result with it. */
  private refresh(teamId: number, entry: CacheEntry): void {
    entry.refreshing = true;
    this.load(teamId).then(
      (value) => {
        if (this.cache.get(teamId) === entry) this.cache.set(teamId, { current: Promise.resolve(value), value, refreshing: false });
      },
      (error: unknown) => {
        entry.refreshing = false;
        this.deps.logger.warn({ err: error, teamId }, 'flag definitions not reloaded; serving the previous ones');
      },
    );
  }

  private async load(teamId: number): Promise<ProjectFlags> {
    const records = await this.deps.flags.liveForTeam(teamId);
    const [mapping, cohortRows] = await Promise.all([
      groupTypeIndexes(this.deps.pool, teamId),
      this.deps.pool.query<StoredCohort>('SELECT id, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted', [teamId]),
    ]);
    const cohorts = cohortDefinitions(cohortRows.rows);
    // As PostHog's local evaluation sends them: every dynamic cohort's filters as stored. An SDK
    // cannot match a behavioural condition locally, so it asks decide, which reads the listing.
    const cohortFilters: Record<string, unknown> = {};
    for (const row of cohortRows.rows) if (!row.is_static) cohortFilters[String(row.id)] = row.filters.properties ?? {};
    const flags = records.map(
      (r): FlagDefinition => ({
        id: r.id,
        key: r.key,
        name: r.name,
        active: r.active,
        deleted: r.deleted,
        ensure_experience_continuity: r.ensure_experience_continuity,
        version: r.version,
        filters: r.filters as FlagDefinition['filters'],
      }),
    );
    const groupTypeMapping: Record<number, string> = Object.fromEntries([...mapping].map(([type, index]) => [index, type]));
    const loaded: ProjectFlags = {
      records,
      flags,
      groupTypeMapping,
      groupTypeIndexes: Object.fromEntries(mapping),
      continuityKeys: flags.filter((f) => f.ensure_experience_continuity && f.active).map((f) => f.key),
      cohorts,
      cohortFilters,
      needs: storedDataNeeds(flags, cohorts, groupTypeMapping),
      loadedAt: this.clock(),
    };
    this.lastLoaded.set(teamId, loaded);
    return loaded;
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
  }
}
