import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { createLogger, type Logger } from '@tributary/logger';
import { flagRoutes } from '../../decide/src/decide-routes.js';
import { DecideService } from '../../decide/src/decide-service.js';
import { captureRoutes } from '../src/capture-routes.js';

export interface SdkService {
  url: string;
  logger: Logger;
  runtime: ServiceRuntime;
}

const LIMIT = 64 * 1024;

/**
 * Capture's and decide's routes in-process, with stores that know no project: enough for
 * everything the SDK edge answers before a project is looked up, and for the 401 after it.
 */
export async function startSdkServices(): Promise<{ capture: SdkService; decide: SdkService; close: () => Promise<void> }> {
  const start = async (name: string, direct: (logger: Logger) => Parameters<typeof startServiceRuntime>[0]['direct']) => {
    const logger = createLogger(name, 'silent');
    const runtime = await startServiceRuntime({ name, logger, host: '127.0.0.1', port: 0, shutdownTimeoutMs: 1_000, direct: direct(logger), dependencies: {}, stop: async () => undefined }, false);
    return { url: `http://127.0.0.1:${runtime.port}`, logger, runtime };
  };
  const capture = await start('capture-edge', (logger) =>
    captureRoutes({ tokens: { resolve: async () => null }, publisher: { publish: async () => undefined }, logger, maxBatchBytes: LIMIT, maxEventBytes: LIMIT }),
  );
  const decide = await start('decide-edge', (logger) =>
    flagRoutes(
      new DecideService({
        tokens: { known: () => undefined, resolve: async () => null },
        definitions: { loaded: () => undefined, forProject: () => Promise.reject(new Error('no project is known')) },
        data: {} as never,
        logger,
      }),
      { hasRunningSurvey: async () => false },
    ),
  );
  return { capture, decide, close: async () => void (await Promise.all([capture.runtime.shutdown('test finished'), decide.runtime.shutdown('test finished')])) };
}
