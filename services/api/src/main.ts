import { loadConfig } from '@tributary/config';
import { startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { apiService } from './api-service.js';

const config = loadConfig(process.env, {}, 'api');
const { options } = await apiService(config, createLogger('api', config.logLevel));
await startServiceRuntime(options);
