import type { Redis } from '@tributary/redis';
import type { ControlPlaneStore } from './control-plane-store.js';

export interface ProjectRef {
  id: number;
}

const cacheKey = (token: string) => `tributary:project-token:${token}`;
const LOCAL_MAX_ENTRIES = 10_000;
/**
 * How long Redis keeps a known token's entry: far past its freshness (`ttlSeconds`), so that when
 * Postgres cannot be asked the last answer still stands in. A token that changes or goes away is
 * dropped at once (`invalidate`), and a stale entry is checked against Postgres when it answers.
 */
const KEEP_KNOWN_SECONDS = 7 * 24 * 60 * 60;

/** A known token's entry: the project id and when it was read from Postgres (ms), `id:readAt`. */
function parseEntry(value: string, now: number): { id: number; readAt: number } {
  const [id, readAt] = value.split(':');
  // An entry written without the time (before it was kept) is as fresh as its Redis expiry made it.
  return { id: Number(id), readAt: readAt === undefined ? now : Number(readAt) };
}

/**
 * Project API key -> project, through Redis (shared by every replica) in front of Postgres.
 * Unknown tokens are cached briefly too, so a flood of bad keys does not reach Postgres.
 * When Redis is unavailable the lookup goes straight to Postgres. Each process also remembers an
 * answer for a few seconds, so a project deleted elsewhere is still accepted that long. When
 * Postgres is away, a known token is still resolved, from Redis's last answer or, with Redis gone
 * too, from the process's: capture, decide and ingest keep serving projects they have seen.
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

  /**
   * The answer this process remembers, without waiting: undefined when it has none still fresh.
   * For hot paths, where awaiting `resolve` costs a turn of the microtask queue every time.
   */
  known(token: string): ProjectRef | null | undefined {
    const memo = this.local.get(token);
    return memo && memo.expires > Date.now() ? memo.project : undefined;
  }

  async resolve(token: string): Promise<ProjectRef | null> {
    const held = this.known(token);
    if (held !== undefined) return held;
    const now = Date.now();
    // Stale, but still the answer when neither Redis nor Postgres gives one.
    const memo = this.local.get(token);
    let project: ProjectRef | null;
    try {
      project = await this.resolveShared(token, now);
    } catch (error) {
      if (memo?.project) return memo.project;
      throw error;
    }
    // Bounded, so a flood of random tokens cannot grow it without limit.
    if (this.local.size >= LOCAL_MAX_ENTRIES) this.local.clear();
    this.local.set(token, { project, expires: now + (project ? this.localTtlMs : Math.min(this.localTtlMs, this.negativeTtlSeconds * 1000)) });
    return project;
  }

  private async resolveShared(token: string, now: number): Promise<ProjectRef | null> {
    const cached = await this.redis.get(cacheKey(token)).catch(() => undefined);
    if (cached === 'none') return null;
    const known = cached ? parseEntry(cached, now) : null;
    if (known && now - known.readAt < this.ttlSeconds * 1000) return { id: known.id };
    let project: Awaited<ReturnType<ControlPlaneStore['findProjectByToken']>>;
    try {
      project = await this.store.findProjectByToken(token);
    } catch (error) {
      if (known) return { id: known.id };
      throw error;
    }
    const value = project ? `${project.id}:${now}` : 'none';
    await this.redis.set(cacheKey(token), value, 'EX', project ? KEEP_KNOWN_SECONDS : this.negativeTtlSeconds).catch(() => undefined);
    return project ? { id: project.id } : null;
  }

  /** Called when a project's token changes or the project is deleted. */
  async invalidate(token: string): Promise<void> {
    this.local.delete(token);
    await this.redis.del(cacheKey(token));
  }
}
