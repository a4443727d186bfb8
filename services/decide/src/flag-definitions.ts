import type { Redis } from '@tributary/redis';
import { FLAGS_CHANGED_CHANNEL, groupTypeIndexes, type FeatureFlagRecord, type FeatureFlagStore } from '@tributary/control-plane';
import type { CohortDefinition, CohortFilterGroup, FlagDefinition } from '@tributary/flags';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import type { DecideMetrics } from './decide-metrics.js';

export interface ProjectFlags {
  flags: FlagDefinition[];
  records: FeatureFlagRecord[];
  groupTypeMapping: Record<number, string>;
  cohorts: Map<number, CohortDefinition>;
  cohortFilters: Record<string, unknown>;
  loadedAt: number;
}

/**
 * Flag definitions per project, held in memory. A change made through the api is announced on
 * a Redis channel and drops the project's entry at once on every replica; entries also expire
 * after `maxAgeMs`, in case an announcement was missed while Redis was away.
 */
export class FlagDefinitions {
  private readonly cache = new Map<number, Promise<ProjectFlags>>();
  private subscriber: Redis | null = null;

  constructor(
    private readonly deps: { pool: Pool; flags: FeatureFlagStore; logger: Logger; metrics?: DecideMetrics },
    private readonly maxAgeMs = 30_000,
    private readonly clock: () => number = Date.now,
  ) {}

  async subscribe(subscriber: Redis): Promise<void> {
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, teamId: string) => this.cache.delete(Number(teamId)));
    await subscriber.subscribe(FLAGS_CHANGED_CHANNEL);
  }

  async forProject(teamId: number): Promise<ProjectFlags> {
    const cached = this.cache.get(teamId);
    if (cached) {
      const value = await cached.catch(() => null);
      const fresh = value !== null && this.clock() - value.loadedAt < this.maxAgeMs;
      this.deps.metrics?.cacheLookup('flag_definitions', fresh);
      if (fresh) return value;
      this.cache.delete(teamId);
    } else {
      this.deps.metrics?.cacheLookup('flag_definitions', false);
    }
    const loading = this.load(teamId);
    this.cache.set(teamId, loading);
    loading.catch(() => this.cache.delete(teamId));
    return loading;
  }

  private async load(teamId: number): Promise<ProjectFlags> {
    const records = await this.deps.flags.liveForTeam(teamId);
    const [mapping, cohortRows] = await Promise.all([
      groupTypeIndexes(this.deps.pool, teamId),
      this.deps.pool.query<{ id: number; is_static: boolean; filters: { properties?: CohortFilterGroup } }>(
        'SELECT id, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted',
        [teamId],
      ),
    ]);
    const cohorts = new Map<number, CohortDefinition>();
    const cohortFilters: Record<string, unknown> = {};
    for (const row of cohortRows.rows) {
      cohorts.set(row.id, row.is_static ? { id: row.id, kind: 'static' } : { id: row.id, kind: 'dynamic', filters: row.filters.properties ?? {} });
      if (!row.is_static) cohortFilters[String(row.id)] = row.filters.properties ?? {};
    }
    return {
      records,
      flags: records.map((r) => ({
        id: r.id,
        key: r.key,
        name: r.name,
        active: r.active,
        deleted: r.deleted,
        ensure_experience_continuity: r.ensure_experience_continuity,
        version: r.version,
        filters: r.filters as FlagDefinition['filters'],
      })),
      groupTypeMapping: Object.fromEntries([...mapping].map(([type, index]) => [index, type])),
      cohorts,
      cohortFilters,
      loadedAt: this.clock(),
    };
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
  }
}
