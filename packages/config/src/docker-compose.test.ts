import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ENV_VARIABLES, SERVICE_NAMES, loadConfig, type ServiceName } from './index.js';

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
  volumes?: string[];
  mem_limit?: string;
}
/**
 * `${NAME:?message}` is required: compose refuses to start without it, or with it empty, as this
 * does. An empty value counts as unset, as compose's `:?` and `:-` take it.
 */
const interpolated = (env: Record<string, string>) =>
  read('docker-compose.yml')
    .replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] || fallback)
    .replace(/\$\{(\w+):\?([^}]*)\}/g, (_, name: string, message: string) => {
      if (!env[name]) throw new Error(`${name}: ${message}`);
      return env[name];
    });
/** `NAME=value` lines of an env file, as compose reads them (comments and blank lines skipped). */
const envFile = (file: string) =>
  Object.fromEntries(
    read(file)
      .split('\n')
      .map((line) => /^(\w+)=(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
/** The secrets docker-compose.yml requires from .env, in the order .env.example lists them, each given a value of its own. */
const ENV_EXAMPLE = envFile('.env.example');
const SECRETS = Object.fromEntries(Object.keys(ENV_EXAMPLE).map((name) => [name, `test-${name.toLowerCase().replace(/_/g, '-')}`]));
const CLICKHOUSE_PASSWORDS = Object.fromEntries(Object.entries(SECRETS).filter(([name]) => /^CLICKHOUSE_\w+_PASSWORD$/.test(name)));
const servicesWith = (env: Record<string, string>) => (parse(interpolated(env), { merge: true }) as { services: Record<string, ComposeService> }).services;
const clusterEnv = envFile('infra/cluster/compose.env');
const services = servicesWith(SECRETS);
const clusterServices = servicesWith({ ...clusterEnv, ...SECRETS });
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
      const config = loadConfig(Object.fromEntries(Object.entries(clusterServices[name]!.environment ?? {}).map(([k, v]) => [k, String(v)])), {}, name);
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
      const config = loadConfig(environment, {}, name);
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

  it('starts nowhere without every secret .env.example lists, which it leaves empty', () => {
    expect(Object.keys(ENV_EXAMPLE)).toEqual(expect.arrayContaining(['API_KEY_PEPPER', 'POSTGRES_PASSWORD', 'REDIS_PASSWORD', ...Object.keys(CLICKHOUSE_PASSWORDS)]));
    expect(Object.keys(CLICKHOUSE_PASSWORDS)).toHaveLength(7);
    for (const [name, value] of Object.entries(ENV_EXAMPLE)) expect({ name, value }).toEqual({ name, value: '' });
    for (const name of Object.keys(SECRETS)) {
      const { [name]: _, ...others } = SECRETS;
      expect(() => servicesWith(others)).toThrow(name);
      expect(() => servicesWith({ ...others, [name]: '' })).toThrow(name);
    }
    // Every variable the file requires is one .env.example lists.
    const required = new Set([...read('docker-compose.yml').matchAll(/\$\{(\w+):\?/g)].map(([, name]) => name));
    expect([...required].sort()).toEqual(Object.keys(SECRETS).sort());
  });

  it('writes no secret into the YAML: each store and service takes its password from .env', () => {
    const yaml = read('docker-compose.yml');
    expect(yaml).not.toMatch(/change-me|postgres:postgres|PASSWORD: [^$"{]/);
    expect(services.postgres!.environment).toMatchObject({ POSTGRES_PASSWORD: SECRETS.POSTGRES_PASSWORD });
    expect(services.redis!.command).toEqual(['redis-server', '--requirepass', SECRETS.REDIS_PASSWORD]);
    for (const name of SERVICE_NAMES) {
      const config = loadConfig(environmentOf(name), {}, name);
      expect(config.apiKeyPepper).toBe(SECRETS.API_KEY_PEPPER);
      expect(new URL(config.databaseUrl).password).toBe(SECRETS.POSTGRES_PASSWORD);
      expect(new URL(config.redisUrl).password).toBe(SECRETS.REDIS_PASSWORD);
    }
  });

  it('refuses, in production mode, to start a service given a development secret, naming it', () => {
    const pepper = ENV_VARIABLES.apiKeyPepper[1];
    const withDefaultPepper = servicesWith({ ...SECRETS, API_KEY_PEPPER: pepper });
    for (const name of SERVICE_NAMES) {
      const environment = Object.fromEntries(Object.entries(withDefaultPepper[name]!.environment ?? {}).map(([k, v]) => [k, String(v)]));
      expect(() => loadConfig(environment, {}, name)).toThrow(/API_KEY_PEPPER is the development default/);
    }
  });

  it('connects each service that uses ClickHouse as its own user, the query endpoint as the read-only one, migrations as the administrator', () => {
    const users = { ingest: 'INGEST', api: 'API', worker: 'WORKER', migrate: 'ADMIN' } as const;
    for (const [name, user] of Object.entries(users)) {
      const config = loadConfig(environmentOf(name), {}, name === 'migrate' ? 'cli' : (name as ServiceName));
      expect({ name, user: config.clickhouseUser, password: config.clickhousePassword }).toEqual({
        name,
        user: `tributary_${user.toLowerCase()}`,
        password: CLICKHOUSE_PASSWORDS[`CLICKHOUSE_${user}_PASSWORD`],
      });
    }
    const api = loadConfig(environmentOf('api'), {}, 'api');
    expect([api.queryClickhouseUser, api.queryClickhousePassword]).toEqual(['tributary_query', CLICKHOUSE_PASSWORDS.CLICKHOUSE_QUERY_PASSWORD]);
  });

  it('gives every ClickHouse server the users file, the server caps, a memory limit and every password, in both topologies', () => {
    for (const [name, service] of [['clickhouse', services.clickhouse!], ...['1', '2', '3', '4'].map((n) => [`clickhouse-${n}`, clusterServices[`clickhouse-${n}`]!] as const)] as const) {
      expect({ name, volumes: service.volumes }).toEqual({
        name,
        volumes: expect.arrayContaining([
          './infra/clickhouse/docker-users.xml:/etc/clickhouse-server/users.d/tributary.xml:ro',
          './infra/clickhouse/docker-config.xml:/etc/clickhouse-server/config.d/tributary.xml:ro',
        ]),
      });
      expect({ name, environment: service.environment }).toEqual({ name, environment: expect.objectContaining(CLICKHOUSE_PASSWORDS) });
      expect({ name, memory: service.mem_limit }).toEqual({ name, memory: expect.stringMatching(/^\d+g$/) });
    }
    // The users file names each password by the variable compose gives the servers.
    const users = read('infra/clickhouse/docker-users.xml');
    for (const name of Object.keys(CLICKHOUSE_PASSWORDS)) expect(users).toContain(`<password from_env="${name}"/>`);
    // Cluster mode's servers reach each other as the replica user, never as a passwordless default.
    const replicas = [...read('infra/cluster/docker/clickhouse-cluster.xml').matchAll(/<replica>(.*?)<\/replica>/g)].map(([, replica]) => replica);
    // Four in the cluster, two again in the cluster of one replica per shard.
    expect(replicas).toHaveLength(6);
    for (const replica of replicas) expect(replica).toContain('<user>tributary_replica</user><password from_env="CLICKHOUSE_REPLICA_PASSWORD"/>');
  });

  it('publishes only the front door, which waits for the services it routes to', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports?.length).map(([name]) => name);
    expect(published).toEqual(['nginx']);
    const front = new URL(ENV_VARIABLES.publicUrl[1]).port;
    expect(services.nginx!.ports).toEqual([`${front}:${front}`]);
    expect(services.nginx!.depends_on).toEqual(['capture', 'decide', 'api']);
  });
});
