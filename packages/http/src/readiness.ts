/**
 * What `/_ready` reports: every store a service uses, checked at once and each within a bound.
 * A required store that is away makes the service not ready (503), so a load balancer or
 * orchestrator stops sending it traffic. An optional one only makes it degraded (still 200):
 * the service works around it (capture without the overflow counter, decide from its caches),
 * and taking it out of rotation would turn a partial outage into a full one. The body names
 * the state of each store either way.
 */
export interface Dependency {
  /** Resolves true when the store answers; false, a rejection or no answer in time mean it does not. */
  check: () => Promise<boolean>;
  required: boolean;
}

export type Dependencies = Record<string, Dependency>;

export interface ReadinessReport {
  status: 'ready' | 'degraded' | 'not_ready';
  checks: Record<string, 'ok' | 'unavailable'>;
}

/** Below the 2 s that the status page (and a typical orchestrator probe) waits for the whole answer. */
export const READINESS_CHECK_TIMEOUT_MS = 1_500;

export async function assessReadiness(dependencies: Dependencies, timeoutMs = READINESS_CHECK_TIMEOUT_MS): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(dependencies).map(async ([name, dependency]) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      const ok = await Promise.race([dependency.check().catch(() => false), timeout]);
      clearTimeout(timer);
      return [name, ok === true, dependency.required] as const;
    }),
  );
  const checks = Object.fromEntries(entries.map(([name, ok]) => [name, ok ? 'ok' : 'unavailable'] as const));
  const status = entries.some(([, ok, required]) => !ok && required) ? 'not_ready' : entries.some(([, ok]) => !ok) ? 'degraded' : 'ready';
  return { status, checks };
}
