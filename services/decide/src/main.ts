import { loadConfig } from '@tributary/config';
import { runAsWorkers, startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { buildDecide } from './decide-app.js';

const config = loadConfig(process.env, {}, 'decide');
const logger = createLogger('decide', config.logLevel);
await runAsWorkers('decide', config.decideWorkers, logger);
const { options } = await buildDecide({ config, logger });
await startServiceRuntime(options);
