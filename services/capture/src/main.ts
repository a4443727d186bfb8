import { loadConfig } from '@tributary/config';
import { runAsWorkers, startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { buildCapture } from './capture-app.js';

const config = loadConfig(process.env, {}, 'capture');
const logger = createLogger('capture', config.logLevel);
await runAsWorkers('capture', config.captureWorkers, logger);
const { options } = await buildCapture({ config, logger });
await startServiceRuntime(options);
