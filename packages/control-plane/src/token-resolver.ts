import type { Redis } from '@tributary/redis';
import type { ControlPlaneStore } from './control-plane-store.js';

export interface ProjectRef {
  id: number;
}

const cacheKey = (token: string) => `tributary:project-token:${token}`;
const LOCAL_MAX_ENTRIES = 10_000;

/**
 * Project API key -> project, through Redis (shared by every replica) in front of Postgres.
 * Unknown tokens are cached briefly too, so a flood of bad keys does not reach Postgres.
 * When Redis is unavailable the lookup goes straight to Postgres. Each process also remembers an
 * answer for a few seconds, so a project deleted elsewhere is still accepted that long.
 */
export class TokenResolver {
  constructor(
    private readonly store: Pick<ControlPlaneStore, 'findProjectByToken'>,
    private readonly redis: Redis,
    private readonly ttlSeconds = 300,
    private readonly negativeTtlSeconds = 10,
    private readonly localTtlMs = 5_000,
  ) {}

  /** Per process, in front of Redis: a hot path resolves the same few tokens thousands of times a second. */
  private readonly local = new Map<string, { project: ProjectRef | null; expires: number }>();

  async resolve(token: string): Promise<ProjectRef | null> {
    const now = Date.now();
    const memo = this.local.get(token);
    if (memo && memo.expires > now) return memo.project;
    const project = await this.resolveShared(token);
    // Bounded, so a flood of random tokens cannot grow it without limit.
    if (this.local.size >= LOCAL_MAX_ENTRIES) this.local.clear();
    this.local.set(token, { project, expires: now + (project ? this.localTtlMs : Math.min(this.localTtlMs, this.negativeTtlSeconds * 1000)) });
    return project;
  }

  private async resolveShared(token: string): Promise<ProjectRef | null> {
    const cached = await this.redis.get(cacheKey(token)).catch(() => undefined);
    if (cached === 'none') return null;
    if (cached) return { id: Number(cached) };
    const project = await this.store.findProjectByToken(token);
    const value = project ? String(project.id) : 'none';
    await this.redis.set(cacheKey(token), value, 'EX', project ? this.ttlSeconds : this.negativeTtlSeconds).catch(() => undefined);
    return project ? { id: project.id } : null;
  }

  /** Called when a project's token changes or the project is deleted. */
  async invalidate(token: string): Promise<void> {
    this.local.delete(token);
    await this.redis.del(cacheKey(token));
  }
}
