import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { ENV_VARIABLES, SERVICE_NAMES, type Config } from '@tributary/config';
import type { IpAddress } from './address-ranges.js';
import { parseHost } from './destination-host.js';
import type { DestinationPolicy, StackDestination } from './destination-guard.js';
import { parseDestinationRule, type DestinationRule } from './destination-rules.js';

export type StackConfig = Pick<
  Config,
  'host' | 'clickhouseUrl' | 'redisUrl' | 'kafkaBrokers' | 'databaseUrl' | 'publicUrl' | 'serviceUrls' | 'capturePort' | 'decidePort' | 'apiPort' | 'ingestPort' | 'workerPort' | 'batchExportAllowedDestinations'
>;

/** ClickHouse servers a stack runs on consecutive ports: the four of cluster mode (infra/cluster). */
const CLICKHOUSE_NODES = 4;
/** ClickHouse's native and interserver ports, ZooKeeper's and ClickHouse Keeper's: not in the config, fixed by infra/. */
const CLICKHOUSE_NATIVE_PORT = 9000;
const CLICKHOUSE_INTERSERVER_OFFSET = 9;
const ZOOKEEPER_PORTS = [2181, 9181];
/** Ingest replicas answer on INGEST_PORT + 100 × n (infra/services.sh). */
const INGEST_REPLICAS = 10;

const LOCAL_RANGES = ['127.0.0.0/8', '::1/128', '0.0.0.0/8', '::/128'].map((cidr) => ipaddr.parseCIDR(cidr));

const endpointOf = (url: string) => {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) || ({ 'http:': 80, 'https:': 443 } as Record<string, number>)[parsed.protocol] || 0, path: parsed.pathname };
};

/**
 * The targets a host of the stack is reached at: a host that is this machine (loopback, the
 * unspecified address, `localhost`) is every loopback address, the unspecified address and each
 * address of this machine's interfaces, since a service bound to all of them answers on each.
 */
function targetsOf(host: string, localAddresses: readonly IpAddress[]): DestinationRule['target'][] {
  const parsed = parseHost(host);
  const local = 'name' in parsed ? parsed.name === 'localhost' || parsed.name.endsWith('.localhost') : ['loopback', 'unspecified'].includes(parsed.address.range());
  if (local) return [...LOCAL_RANGES, ...localAddresses.map((address) => [address, address.kind() === 'ipv4' ? 32 : 128] as [IpAddress, number])].map((range) => ({ range }));
  return ['name' in parsed ? { name: parsed.name } : { range: [parsed.address, parsed.address.kind() === 'ipv4' ? 32 : 128] }];
}

/**
 * This installation's own stores and services, from the config's addresses and ports: ClickHouse
 * (HTTP and native ports of each cluster node, interserver, ZooKeeper/Keeper on its host), Kafka
 * (brokers and controllers), Redis, the nginx front door (PUBLIC_URL), every service's port at its
 * SERVICE_URLS host and on this machine, and the installation's own Postgres database (another
 * database on that server is the operator's call, through the allow list).
 */
export function stackDestinations(config: StackConfig, localAddresses: readonly IpAddress[]): StackDestination[] {
  const rules: StackDestination[] = [];
  const deny = (host: string, ports: number[], what: string, database?: string) => {
    for (const target of targetsOf(host, localAddresses)) for (const port of ports) rules.push({ target, port, what, ...(database === undefined ? {} : { database }) });
  };
  const nodes = (first: number) => Array.from({ length: CLICKHOUSE_NODES }, (_, n) => first + n);
  const clickhouse = endpointOf(config.clickhouseUrl);
  deny(clickhouse.host, nodes(clickhouse.port), 'ClickHouse (HTTP)');
  deny(clickhouse.host, nodes(CLICKHOUSE_NATIVE_PORT), 'ClickHouse (native protocol)');
  deny(clickhouse.host, nodes(CLICKHOUSE_NATIVE_PORT + CLICKHOUSE_INTERSERVER_OFFSET), 'ClickHouse (interserver)');
  deny(clickhouse.host, ZOOKEEPER_PORTS, 'ZooKeeper');
  for (const broker of config.kafkaBrokers) {
    const { host, port } = endpointOf(`tcp://${broker}`);
    deny(host, [port, port + 1], 'Kafka');
  }
  const redis = endpointOf(config.redisUrl);
  deny(redis.host, [redis.port || 6379], 'Redis');
  const front = endpointOf(config.publicUrl);
  deny(front.host, [front.port], 'front door (nginx)');
  for (const name of SERVICE_NAMES) {
    const port = config[`${name}Port`];
    const ports = name === 'ingest' ? Array.from({ length: INGEST_REPLICAS }, (_, n) => port + 100 * n) : [port];
    deny(config.host, ports, `${name} service`);
    const reached = endpointOf(config.serviceUrls[name]);
    deny(reached.host, [reached.port], `${name} service`);
  }
  const postgres = endpointOf(config.databaseUrl);
  deny(postgres.host, [postgres.port || 5432], 'Postgres database', decodeURIComponent(postgres.path.slice(1)));
  return rules;
}

/** This machine's interface addresses. */
function interfaceAddresses(): IpAddress[] {
  return Object.values(networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .flatMap(({ address }) => (ipaddr.isValid(address.split('%')[0]!) ? [ipaddr.parse(address.split('%')[0]!)] : []));
}

/** The policy a service enforces: the operator's allow list, and this installation's own addresses. */
export function destinationPolicy(config: StackConfig, localAddresses: readonly IpAddress[] = interfaceAddresses()): DestinationPolicy {
  const allowed = config.batchExportAllowedDestinations.map((entry) => {
    try {
      return parseDestinationRule(entry);
    } catch (error) {
      throw new Error(`${ENV_VARIABLES.batchExportAllowedDestinations[0]}: ${(error as Error).message}`, { cause: error });
    }
  });
  return { allowed, denied: stackDestinations(config, localAddresses) };
}
