import { loadConfig } from '@tributary/config';
import { startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { buildApi } from './api-app.js';

const config = loadConfig(process.env, {}, 'api');
const { options } = await buildApi({ config, logger: createLogger('api', config.logLevel) });
await startServiceRuntime(options);
