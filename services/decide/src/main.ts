import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool, postgresAnswers } from '@tributary/postgres';
import { createRedis, redisAnswers } from '@tributary/redis';
import { ControlPlaneStore, FeatureFlagStore, PersonCache, TokenResolver } from '@tributary/control-plane';
import { openGeoIp } from '@tributary/geoip';
import { createMetrics, runAsWorkers, startServiceRuntime } from '@tributary/http';
import { decideMetrics } from './decide-metrics.js';
import { flagRoutes, localEvaluationRoutes } from './decide-routes.js';
import { EvaluationData } from './evaluation-data.js';
import { FlagDefinitions } from './flag-definitions.js';
import { RememberedAnswers } from './remembered-answers.js';
import { sdkConfigRoutes } from './sdk-config-routes.js';

const config = loadConfig();
const logger = createLogger('decide', config.logLevel);
await runAsWorkers('decide', config.decideWorkers, logger);
const registry = createMetrics('decide');
const metrics = decideMetrics(registry);
// Short timeouts: an unreachable store must cost a flag answer, never the whole response.
const pool = createPool(config, { max: 10, statementTimeoutMs: 1_000 });
const redis = createRedis(config, { commandTimeoutMs: 300 });
const store = new ControlPlaneStore(pool, config.apiKeyPepper);
const definitions = new FlagDefinitions({ pool, flags: new FeatureFlagStore(pool), logger, metrics });
await definitions.subscribe(createRedis(config, { forQueues: true }));
const geo = await openGeoIp();
// A connection of its own: Redis tracks every key read on the connection that keeps copies.
const personReader = createRedis(config, { commandTimeoutMs: 300 });
const personCache = new PersonCache(
  personReader,
  config.decidePersonCopies > 0
    ? {
        localCopies: { maxEntries: config.decidePersonCopies, maxAgeMs: 10 * 60_000, onError: (err) => logger.warn({ err }, 'person copies unavailable: reading every person from Redis') },
        countCopyLookup: (hit) => metrics.cacheLookup('person_copies', hit),
      }
    : {},
);
const tokens = new TokenResolver(store, redis);

await startServiceRuntime({
  name: 'decide',
  logger,
  metrics: registry,
  host: config.host,
  port: config.decidePort,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  direct: flagRoutes({
    tokens,
    store,
    definitions,
    data: new EvaluationData({ pool, personCache, logger, metrics }),
    geoip: (ip) => geo.properties(ip),
    logger,
    metrics,
    answers: new RememberedAnswers(config.decideRememberedAnswers),
  }),
  routes: (app) => app.use(sdkConfigRoutes({ tokens, definitions })).use(localEvaluationRoutes({ store, definitions })),
  // Decide answers from its caches while either store is away (see EvaluationData), so neither
  // takes it out of rotation.
  dependencies: {
    postgres: { check: () => postgresAnswers(pool), required: false },
    redis: { check: () => redisAnswers(redis), required: false },
  },
  stop: async () => {
    await definitions.close();
    await pool.end();
    personCache.close();
    personReader.disconnect();
    redis.disconnect();
  },
});
