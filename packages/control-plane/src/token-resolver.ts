import type { Redis } from '@tributary/redis';
import type { ControlPlaneStore } from './control-plane-store.js';

export interface ProjectRef {
  id: number;
}

const cacheKey = (token: string) => `tributary:project-token:${token}`;

/**
 * Project API key -> project, through Redis (shared by every replica) in front of Postgres.
 * Unknown tokens are cached briefly too, so a flood of bad keys does not reach Postgres.
 * When Redis is unavailable the lookup goes straight to Postgres.
 */
export class TokenResolver {
  constructor(
    private readonly store: Pick<ControlPlaneStore, 'findProjectByToken'>,
    private readonly redis: Redis,
    private readonly ttlSeconds = 300,
    private readonly negativeTtlSeconds = 10,
  ) {}

  async resolve(token: string): Promise<ProjectRef | null> {
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
    await this.redis.del(cacheKey(token));
  }
}
