import { loadConfig } from '@tributary/config';
import { startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { buildWorker } from './worker-app.js';

const config = loadConfig(process.env, {}, 'worker');
const { options } = await buildWorker({ config, logger: createLogger('worker', config.logLevel) });
await startServiceRuntime(options);
