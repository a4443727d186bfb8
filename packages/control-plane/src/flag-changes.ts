import type { Redis } from '@tributary/redis';

/** Redis channel on which flag changes are announced to every decide replica. */
export const FLAGS_CHANGED_CHANNEL = 'tributary:flags-changed';

/**
 * Tells every decide process that a project's flags, or the cohorts they target, changed, so
 * that each reloads them. Called by the stores that write them, after the write: whoever writes
 * (the api, the CLI, a test) cannot forget it. A lost announcement is not the write's failure:
 * decide reloads what it holds after a while anyway (see FlagDefinitions).
 */
export async function announceFlagChange(redis: Pick<Redis, 'publish'>, teamId: number): Promise<void> {
  await redis.publish(FLAGS_CHANGED_CHANNEL, String(teamId)).catch(() => 0);
}
