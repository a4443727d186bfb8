import type { Config } from '@tributary/config';
import { ControlPlaneStore, FeatureFlagStore, PersonCache, TokenResolver } from '@tributary/control-plane';
import { openGeoIp } from '@tributary/geoip';
import { createMetrics, stopInOrder, type ServiceRuntimeOptions } from '@tributary/http';
import type { Logger } from '@tributary/logger';
import { createPool, postgresAnswers, type Pool } from '@tributary/postgres';
import { createRedis, redisAnswers, type Redis } from '@tributary/redis';
import { decideMetrics, type DecideMetrics } from './decide-metrics.js';
import { flagRoutes } from './decide-routes.js';
import { DecideService } from './decide-service.js';
import { EvaluationData } from './evaluation-data.js';
import { FlagDefinitions } from './flag-definitions.js';
import { localEvaluationRoutes } from './local-evaluation-routes.js';
import { RememberedAnswers } from './remembered-answers.js';
import { ProductLists } from './product-lists.js';
import { sdkConfigRoutes } from './sdk-config-routes.js';

/** What tests look through or move: they build decide as `main.ts` does, and only these differ. */
export interface DecideObservers {
  /** Every use of Postgres goes through the pool this returns. */
  pool?: (pool: Pool) => Pool;
  metrics?: DecideMetrics;
  /** How long, and by which clock, an id with no person is remembered as such (see EvaluationData). */
  unknownIds?: { ttlMs?: number; clock?: () => number };
}

export interface DecideBuildDeps extends DecideObservers {
  config: Config;
  logger: Logger;
}

export interface DecideStores {
  pool: Pool;
  redis: Redis;
  personCache: PersonCache;
}

/**
 * The decide service, connected: what `main.ts` runs and what the integration tests start on a
 * free port, so both build it the same way.
 */
export async function buildDecide({ config, logger, ...observers }: DecideBuildDeps): Promise<{ options: ServiceRuntimeOptions; stores: DecideStores }> {
  const registry = createMetrics('decide');
  const metrics = observers.metrics ?? decideMetrics(registry);
  // Short timeouts: an unreachable store must cost a flag answer, never the whole response.
  const ownPool = createPool(config, { max: 10, statementTimeoutMs: 1_000 });
  const pool = observers.pool?.(ownPool) ?? ownPool;
  const redis = createRedis(config, { commandTimeoutMs: 300 });
  const store = new ControlPlaneStore(pool, config.apiKeyPepper);
  const definitions = new FlagDefinitions({ pool, flags: new FeatureFlagStore(pool, redis), logger, metrics });
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
  const products = new ProductLists(pool);
  const service = new DecideService({
    tokens,
    definitions,
    data: new EvaluationData({ pool, personCache, logger, metrics, unknownTtlMs: observers.unknownIds?.ttlMs, clock: observers.unknownIds?.clock }),
    geoip: (ip) => geo.properties(ip),
    logger,
    metrics,
    answers: new RememberedAnswers(config.decideRememberedAnswers),
  });
  return {
    stores: { pool, redis, personCache },
    options: {
      name: 'decide',
      logger,
      metrics: registry,
      host: config.host,
      port: config.decidePort,
      trustedProxies: config.trustedProxies,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      direct: flagRoutes(service, products),
      routes: (app) => app.use(sdkConfigRoutes({ tokens, definitions, products })).use(localEvaluationRoutes({ store, definitions })),
      // Decide answers from its caches while either store is away (see EvaluationData), so neither
      // takes it out of rotation.
      dependencies: {
        postgres: { check: () => postgresAnswers(ownPool), required: false },
        redis: { check: () => redisAnswers(redis), required: false },
      },
      stop: stopInOrder(logger, [
        ['flag definitions', () => definitions.close()],
        ['postgres', () => ownPool.end()],
        ['person cache', () => personCache.close()],
        ['redis person reader', () => personReader.disconnect()],
        ['redis', () => redis.disconnect()],
      ]),
    },
  };
}
