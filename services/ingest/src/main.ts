import { loadConfig } from '@tributary/config';
import { startServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { buildIngest } from './ingest-app.js';

const config = loadConfig(process.env, {}, 'ingest');
const { options, consumer } = await buildIngest({ config, logger: createLogger('ingest', config.logLevel) });
await startServiceRuntime(options);
await consumer.start();
