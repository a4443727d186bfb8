import { availableParallelism } from 'node:os';
import { loadConfig, ConfigError, ENV_VARIABLES } from './index.js';

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
});
