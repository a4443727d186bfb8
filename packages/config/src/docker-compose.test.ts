import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ENV_VARIABLES, SERVICE_NAMES, loadConfig } from './index.js';

/**
 * Docker cannot run here, so docker-compose.yml is checked by reading it: the same five services
 * as `make up` starts (infra/services.sh), each on its configured port, with an environment the
 * config accepts, pointing at the stores and at each other by compose service name, after the
 * same set-up steps as infra/up.sh. Its `${NAME:-default}` values are read as compose reads them:
 * with no environment (`--profile single`), and with infra/cluster/compose.env (cluster mode).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string | number>;
  depends_on?: string[] | Record<string, { condition: string }>;
}
const interpolated = (env: Record<string, string>) => read('docker-compose.yml').replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] ?? fallback);
const servicesWith = (env: Record<string, string>) => (parse(interpolated(env), { merge: true }) as { services: Record<string, ComposeService> }).services;
const clusterEnv = Object.fromEntries(
  read('infra/cluster/compose.env')
    .split('\n')
    .map((line) => /^(\w+)=(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!, m[2]!]),
);
const services = servicesWith({});
const clusterServices = servicesWith(clusterEnv);
const CLUSTER_STORES = ['zookeeper', 'clickhouse-1', 'clickhouse-2', 'clickhouse-3', 'clickhouse-4', 'kafka-1', 'kafka-2', 'kafka-3'];
const STORES = { postgres: 'databaseUrl', redis: 'redisUrl', kafka: 'kafkaBrokers', clickhouse: 'clickhouseUrl' } as const;
const CONFIG_NAMES = new Set<string>(Object.values(ENV_VARIABLES).map(([name]) => name));
const startedByMakeUp = /^SERVICES=\(([^)]*)\)/m.exec(read('infra/services.sh'))![1]!.split(/\s+/).filter(Boolean);

const environmentOf = (name: string) => Object.fromEntries(Object.entries(services[name]!.environment ?? {}).map(([k, v]) => [k, String(v)]));
const hostPort = (value: string) => {
  const url = new URL(/^\w+:\/\//.test(value) ? value : `tcp://${value}`);
  return { host: url.hostname, port: url.port };
};
const defaultPort = (key: (typeof STORES)[keyof typeof STORES]) => hostPort(ENV_VARIABLES[key][1].split(',')[0]!).port;

describe('docker-compose.yml runs what make up runs', () => {
  it('has the services make up starts, and only the stores, set-up job and front door beside them', () => {
    expect(new Set(startedByMakeUp)).toEqual(new Set(SERVICE_NAMES));
    const apps = Object.keys(services).filter((name) => services[name]!.build !== undefined && name !== 'migrate');
    expect(new Set(apps)).toEqual(new Set(SERVICE_NAMES));
    expect(new Set(Object.keys(services))).toEqual(new Set([...SERVICE_NAMES, ...Object.keys(STORES), ...CLUSTER_STORES, 'migrate', 'nginx']));
  });

  it('points every service at the cluster profile stores with infra/cluster/compose.env', () => {
    expect(clusterEnv.COMPOSE_PROFILES).toBe('cluster');
    for (const name of CLUSTER_STORES) expect((clusterServices[name] as { profiles?: string[] }).profiles).toEqual(['cluster']);
    for (const name of SERVICE_NAMES) {
      const config = loadConfig(Object.fromEntries(Object.entries(clusterServices[name]!.environment ?? {}).map(([k, v]) => [k, String(v)])));
      expect(config.clickhouseCluster).toBe('tributary');
      expect(config.kafkaBrokers).toEqual(['kafka-1:9092', 'kafka-2:9092', 'kafka-3:9092']);
      expect(hostPort(config.clickhouseUrl)).toEqual({ host: 'clickhouse-1', port: '8123' });
    }
  });

  it('starts each service on its configured port, with an environment the config accepts', () => {
    for (const name of SERVICE_NAMES) {
      const environment = environmentOf(name);
      expect(environment.SERVICE).toBe(name);
      const [portVariable, port] = ENV_VARIABLES[`${name}Port`];
      expect(environment[portVariable]).toBe(port);
      const unknown = Object.keys(environment).filter((key) => key !== 'SERVICE' && !CONFIG_NAMES.has(key));
      expect(unknown).toEqual([]);
      const config = loadConfig(environment);
      expect(config.env).toBe('production');
      expect(config.host).toBe('0.0.0.0');
    }
  });

  it('points every service at the compose stores on their usual ports', () => {
    for (const name of SERVICE_NAMES) {
      const environment = environmentOf(name);
      for (const [store, key] of Object.entries(STORES) as [keyof typeof STORES, (typeof STORES)[keyof typeof STORES]][]) {
        const value = environment[ENV_VARIABLES[key][0]];
        expect(value).toBeDefined();
        expect(hostPort(value!)).toEqual({ host: store, port: defaultPort(key) });
      }
    }
  });

  it('lets the status page reach each service by its compose name and port', () => {
    const { serviceUrls } = loadConfig(environmentOf('api'));
    for (const name of SERVICE_NAMES) expect(serviceUrls[name]).toBe(`http://${name}:${ENV_VARIABLES[`${name}Port`][1]}`);
  });

  it('runs the set-up steps of infra/up.sh first, and starts the services once they succeeded', () => {
    const steps = [...read('infra/up.sh').matchAll(/^npx tributary ([\w:]+)/gm)].map(([, step]) => step);
    expect(steps).toEqual(['migrate', 'kafka:topics', 'bootstrap']);
    const command = services.migrate!.command!.join(' ');
    for (const step of steps) expect(command).toContain(`npx tributary ${step}`);
    for (const name of SERVICE_NAMES) expect(services[name]!.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
  });

  it('publishes only the front door, which waits for the services it routes to', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports?.length).map(([name]) => name);
    expect(published).toEqual(['nginx']);
    const front = new URL(ENV_VARIABLES.publicUrl[1]).port;
    expect(services.nginx!.ports).toEqual([`${front}:${front}`]);
    expect(services.nginx!.depends_on).toEqual(['capture', 'decide', 'api']);
  });
});
