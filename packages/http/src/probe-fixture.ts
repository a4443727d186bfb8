import { createLogger } from '@tributary/logger';
import { startServiceRuntime, type ServiceRuntime, type ServiceRuntimeOptions } from './service-runtime.js';

/**
 * A service for this package's integration tests: on a free port, with no stores, a silent
 * logger and no signal handlers, and whatever routes or options the test gives it.
 */
export function startProbe(options: Partial<ServiceRuntimeOptions> = {}): Promise<ServiceRuntime> {
  return startServiceRuntime(
    { name: 'probe', logger: createLogger('probe', 'silent'), host: '127.0.0.1', port: 0, shutdownTimeoutMs: 1000, dependencies: {}, stop: async () => undefined, ...options },
    false,
  );
}
