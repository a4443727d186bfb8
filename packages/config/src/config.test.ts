import { availableParallelism } from 'node:os';
import { loadConfig, ConfigError, ENV_VARIABLES, PRODUCTION_SECRETS, type ConfigUser } from './index.js';

describe('loadConfig', () => {
  it('uses the documented defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config.capturePort).toBe(8010);
    expect(config.kafkaBrokers).toEqual(['127.0.0.1:9092']);
    expect(config.databaseUrl).toBe(ENV_VARIABLES.databaseUrl[1]);
  });

  it('coerces numbers and splits broker lists', () => {
    const config = loadConfig({ API_PORT: '9100', KAFKA_BROKERS: 'a:1, b:2' });
    expect(config.apiPort).toBe(9100);
    expect(config.kafkaBrokers).toEqual(['a:1', 'b:2']);
  });

  it('finds each service at its port on this machine unless SERVICE_URLS names another place', () => {
    expect(loadConfig({ INGEST_PORT: '9113' }).serviceUrls).toMatchObject({ capture: 'http://127.0.0.1:8010', ingest: 'http://127.0.0.1:9113' });
    expect(loadConfig({ SERVICE_URLS: 'capture=http://capture:8010,worker=https://w.internal:1' }).serviceUrls).toMatchObject({
      capture: 'http://capture:8010',
      worker: 'https://w.internal:1',
      api: 'http://127.0.0.1:8012',
    });
    expect(() => loadConfig({ SERVICE_URLS: 'kafka=http://x' })).toThrow(/SERVICE_URLS/);
  });

  it('names the variable that is invalid', () => {
    expect(() => loadConfig({ API_PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ API_PORT: 'eighty' })).toThrow(/API_PORT/);
    expect(() => loadConfig({ CLICKHOUSE_DATABASE: 'x; DROP' })).toThrow(/CLICKHOUSE_DATABASE/);
  });

  it('runs capture and decide as one process per core unless told how many', () => {
    expect(loadConfig({})).toMatchObject({ captureWorkers: availableParallelism(), decideWorkers: availableParallelism() });
    expect(loadConfig({ CAPTURE_WORKERS: '0', DECIDE_WORKERS: '0' })).toMatchObject({ captureWorkers: availableParallelism(), decideWorkers: availableParallelism() });
    expect(loadConfig({ CAPTURE_WORKERS: '3', DECIDE_WORKERS: '1' })).toMatchObject({ captureWorkers: 3, decideWorkers: 1 });
    expect(() => loadConfig({ CAPTURE_WORKERS: 'many' })).toThrow(/CAPTURE_WORKERS/);
    expect(() => loadConfig({ DECIDE_WORKERS: '-1' })).toThrow(/DECIDE_WORKERS/);
  });

  it('gives each capture process one Kafka producer unless told how many', () => {
    expect(loadConfig({}).captureKafkaProducers).toBe(1);
    expect(loadConfig({ CAPTURE_KAFKA_PRODUCERS: '4' }).captureKafkaProducers).toBe(4);
    expect(() => loadConfig({ CAPTURE_KAFKA_PRODUCERS: '0' })).toThrow(/CAPTURE_KAFKA_PRODUCERS/);
  });

  it('lets ingest hold 40,000 queued events unless told how many', () => {
    expect(loadConfig({}).ingestMaxQueuedEvents).toBe(40_000);
    expect(loadConfig({ INGEST_MAX_QUEUED_EVENTS: '80000' }).ingestMaxQueuedEvents).toBe(80_000);
    expect(() => loadConfig({ INGEST_MAX_QUEUED_EVENTS: '0' })).toThrow(/INGEST_MAX_QUEUED_EVENTS/);
    expect(() => loadConfig({ INGEST_MAX_QUEUED_EVENTS: 'lots' })).toThrow(/INGEST_MAX_QUEUED_EVENTS/);
  });

  it('computes two tiles of a dashboard at once unless told how many, never more than a project may run', () => {
    expect(loadConfig({}).dashboardTileConcurrency).toBe(2);
    expect(loadConfig({ DASHBOARD_TILE_CONCURRENCY: '4' }).dashboardTileConcurrency).toBe(4);
    expect(() => loadConfig({ DASHBOARD_TILE_CONCURRENCY: '0' })).toThrow(/DASHBOARD_TILE_CONCURRENCY/);
    expect(() => loadConfig({ DASHBOARD_TILE_CONCURRENCY: '5' })).toThrow(/DASHBOARD_TILE_CONCURRENCY \(5\) must be at most QUERY_CONCURRENCY_PER_PROJECT \(4\)/);
    expect(loadConfig({ DASHBOARD_TILE_CONCURRENCY: '5', QUERY_CONCURRENCY_PER_PROJECT: '8' }).dashboardTileConcurrency).toBe(5);
  });
});

describe('TRIBUTARY_ENV=production', () => {
  const secrets = {
    TRIBUTARY_ENV: 'production',
    API_KEY_PEPPER: 'a-pepper-of-our-own',
    DATABASE_URL: 'postgres://tributary:pg-secret@db:5432/tributary',
    REDIS_URL: 'redis://:redis-secret@redis:6379/0',
    CLICKHOUSE_PASSWORD: 'ch-secret',
    QUERY_CLICKHOUSE_PASSWORD: 'query-secret',
  };

  it('is development unless said', () => {
    expect(loadConfig({}).env).toBe('development');
    expect(() => loadConfig({ TRIBUTARY_ENV: 'staging' })).toThrow(/TRIBUTARY_ENV/);
  });

  it('starts with secrets of its own', () => {
    expect(loadConfig(secrets).env).toBe('production');
    for (const user of Object.keys(PRODUCTION_SECRETS) as ConfigUser[]) expect(loadConfig(secrets, {}, user).env).toBe('production');
  });

  it('refuses every development secret at once, naming each variable', () => {
    let message = '';
    try {
      loadConfig({ TRIBUTARY_ENV: 'production' });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toContain('API_KEY_PEPPER is the development default');
    expect(message).toContain('DATABASE_URL has no password');
    expect(message).toContain('REDIS_URL has no password');
    expect(message).toContain('CLICKHOUSE_PASSWORD is the development default');
    expect(message).toContain('QUERY_CLICKHOUSE_PASSWORD is the development default');
  });

  it('refuses a development default even when it is set explicitly', () => {
    expect(() => loadConfig({ ...secrets, API_KEY_PEPPER: ENV_VARIABLES.apiKeyPepper[1] })).toThrow(/API_KEY_PEPPER is the development default/);
    expect(() => loadConfig({ ...secrets, CLICKHOUSE_PASSWORD: ENV_VARIABLES.clickhousePassword[1] })).toThrow(/^(?!.*QUERY_CLICKHOUSE).*CLICKHOUSE_PASSWORD is the development default/);
    expect(() => loadConfig({ ...secrets, DATABASE_URL: 'postgres://postgres@db:5432/tributary' })).toThrow(/DATABASE_URL has no password/);
    expect(() => loadConfig({ ...secrets, REDIS_URL: 'redis://redis:6379/0' })).toThrow(/REDIS_URL has no password/);
  });

  it('checks only the secrets a process uses: capture and decide send nothing to ClickHouse, only api runs the query endpoint', () => {
    const storesOnly = { ...secrets, CLICKHOUSE_PASSWORD: '', QUERY_CLICKHOUSE_PASSWORD: '' };
    expect(loadConfig(storesOnly, {}, 'capture').env).toBe('production');
    expect(loadConfig(storesOnly, {}, 'decide').env).toBe('production');
    expect(loadConfig({ ...secrets, QUERY_CLICKHOUSE_PASSWORD: '' }, {}, 'ingest').env).toBe('production');
    expect(() => loadConfig(storesOnly, {}, 'ingest')).toThrow(/CLICKHOUSE_PASSWORD/);
    expect(() => loadConfig({ ...secrets, QUERY_CLICKHOUSE_PASSWORD: '' }, {}, 'api')).toThrow(/QUERY_CLICKHOUSE_PASSWORD/);
    expect(() => loadConfig({ ...secrets, API_KEY_PEPPER: '' }, {}, 'capture')).toThrow(/API_KEY_PEPPER/);
  });

  it('lets development and tests run on the defaults', () => {
    expect(loadConfig({ TRIBUTARY_ENV: 'development' }).apiKeyPepper).toBe(ENV_VARIABLES.apiKeyPepper[1]);
    expect(loadConfig({ TRIBUTARY_ENV: 'test' }, {}, 'api').env).toBe('test');
  });
});
