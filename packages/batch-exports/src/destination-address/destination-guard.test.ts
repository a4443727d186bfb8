import ipaddr from 'ipaddr.js';
import { loadConfig } from '@tributary/config';
import { DestinationGuard, DestinationUnresolved, type Resolve } from './destination-guard.js';
import { DestinationRefused } from './destination-refused.js';
import { parseDestinationRule } from './destination-rules.js';
import { destinationPolicy } from './stack-destinations.js';

/** A resolver that knows only these names, as a test's DNS. */
const dns =
  (answers: Record<string, string[]>): Resolve =>
  async (name) => {
    const found = answers[name];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return found;
  };
const NAMES = {
  localhost: ['127.0.0.1', '::1'],
  'exports.example.com': ['93.184.216.34'],
  'rebound.example.com': ['93.184.216.34', '127.0.0.1'],
  'inside.example.com': ['10.0.0.5'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  's3.internal': ['10.0.0.9'],
  clickhouse: ['172.18.0.4'],
};
/** `make up`'s config, on a machine whose one network interface has 192.168.1.20. */
const makeUp = (allowed: string[] = ['127.0.0.1:8333', '127.0.0.1:5432'], env: Record<string, string> = {}) =>
  new DestinationGuard(destinationPolicy(loadConfig({ ...env, BATCH_EXPORT_ALLOWED_DESTINATIONS: allowed.join(',') }), [ipaddr.parse('192.168.1.20')]), dns(NAMES));
const refusal = (guard: DestinationGuard, host: string, port: number, database?: string) =>
  guard.check(host, port, database).then(
    () => null,
    (error: Error) => (error instanceof DestinationRefused ? error.message : `not a refusal: ${error.message}`),
  );

describe('DestinationGuard', () => {
  it('gives the addresses to connect to for a public destination, names and IPv4-mapped addresses as plain IPv4', async () => {
    const guard = makeUp();
    expect(await guard.check('exports.example.com', 443)).toEqual({ name: 'exports.example.com', addresses: ['93.184.216.34'] });
    expect(await guard.check('Exports.Example.com.', 443)).toEqual({ name: 'exports.example.com', addresses: ['93.184.216.34'] });
    expect(await guard.check('::ffff:8.8.8.8', 80)).toEqual({ name: null, addresses: ['8.8.8.8'] });
    expect(await guard.check('134744072', 80)).toEqual({ name: null, addresses: ['8.8.8.8'] });
  });

  it.each([
    ['127.0.0.1', 8080, '127.0.0.1 is loopback, not a public address'],
    ['2130706433', 8080, '127.0.0.1 is loopback, not a public address'],
    ['0x7f000001', 8080, '127.0.0.1 is loopback, not a public address'],
    ['[::1]', 8080, '::1 is loopback, not a public address'],
    ['[::ffff:127.0.0.1]', 8080, '::ffff:7f00:1 is loopback (IPv4 127.0.0.1 inside IPv6), not a public address'],
    ['localhost', 8080, 'localhost resolves to 127.0.0.1, which is loopback, not a public address'],
    ['localhost.', 8080, 'localhost resolves to 127.0.0.1, which is loopback, not a public address'],
    ['mapped.example.com', 8080, 'mapped.example.com resolves to ::ffff:7f00:1, which is loopback (IPv4 127.0.0.1 inside IPv6), not a public address'],
    ['inside.example.com', 443, 'inside.example.com resolves to 10.0.0.5, which is private, not a public address'],
    ['169.254.169.254', 80, '169.254.169.254 is a cloud metadata service'],
    ['metadata.google.internal', 80, 'metadata.google.internal is a cloud metadata service'],
  ])('refuses %s:%d: %s', async (host, port, reason) => {
    expect(await refusal(makeUp(), host, port)).toBe(reason);
  });

  it('refuses a name when any address it resolves to is refused, since the connection could go to any of them', async () => {
    expect(await refusal(makeUp(), 'rebound.example.com', 443)).toBe('rebound.example.com resolves to 127.0.0.1, which is loopback, not a public address');
  });

  it('checks the answer of each check: a name that resolves elsewhere later is refused then (DNS rebinding)', async () => {
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    const guard = new DestinationGuard(destinationPolicy(loadConfig({}), []), async () => answers.shift()!);
    expect(await guard.check('rebinding.example.com', 443)).toEqual({ name: 'rebinding.example.com', addresses: ['93.184.216.34'] });
    expect(await refusal(guard, 'rebinding.example.com', 443)).toBe('rebinding.example.com resolves to 127.0.0.1, which is loopback, not a public address');
  });

  it('says a name that does not resolve is unresolved, which a later attempt may change', async () => {
    await expect(makeUp().check('nowhere.example.com', 443)).rejects.toThrow(DestinationUnresolved);
    await expect(makeUp().check('nowhere.example.com', 443)).rejects.toThrow('nowhere.example.com does not resolve (ENOTFOUND)');
  });

  it("allows the operator's internal destinations: host:port, CIDR, CIDR:port, a name by what it resolves to", async () => {
    const guard = makeUp(['127.0.0.1:8333', '10.0.0.0/8', '[fd00::/8]:5432', 's3.internal:9000']);
    expect(await refusal(guard, '127.0.0.1', 8333)).toBeNull();
    expect(await refusal(guard, 'localhost', 8333)).toBe('localhost resolves to ::1, which is loopback, not a public address');
    expect(await refusal(guard, '127.0.0.1', 8334)).toBe('127.0.0.1 is loopback, not a public address');
    expect(await refusal(guard, '[::ffff:127.0.0.1]', 8333)).toBeNull();
    expect(await refusal(guard, 'inside.example.com', 443)).toBeNull();
    expect(await refusal(guard, 'fd00::7', 5432)).toBeNull();
    expect(await refusal(guard, 'fd00::7', 5433)).toBe('fd00::7 is unique local (private IPv6), not a public address');
    expect(await refusal(guard, '10.0.0.9', 9000)).toBeNull();
  });

  it('never opens a metadata service, whatever the allow list says', async () => {
    const guard = makeUp(['169.254.0.0/16', 'fd00::/8', '100.64.0.0/10']);
    expect(await refusal(guard, '169.254.169.254', 80)).toBe('169.254.169.254 is a cloud metadata service');
    expect(await refusal(guard, 'fd00:ec2::254', 80)).toBe('fd00:ec2::254 is a cloud metadata service');
    expect(await refusal(guard, '100.100.100.200', 80)).toBe('100.100.100.200 is a cloud metadata service');
    expect(await refusal(guard, '169.254.1.1', 80)).toBeNull();
  });

  it.each([
    ['127.0.0.1', 8123, "127.0.0.1:8123 is this installation's ClickHouse (HTTP)"],
    ['127.0.0.1', 9000, "127.0.0.1:9000 is this installation's ClickHouse (native protocol)"],
    ['127.0.0.1', 8124, "127.0.0.1:8124 is this installation's ClickHouse (HTTP)"],
    ['127.0.0.1', 9003, "127.0.0.1:9003 is this installation's ClickHouse (native protocol)"],
    ['127.0.0.1', 9009, "127.0.0.1:9009 is this installation's ClickHouse (interserver)"],
    ['127.0.0.1', 2181, "127.0.0.1:2181 is this installation's ZooKeeper"],
    ['127.0.0.1', 9092, "127.0.0.1:9092 is this installation's Kafka"],
    ['127.0.0.1', 9093, "127.0.0.1:9093 is this installation's Kafka"],
    ['127.0.0.1', 6379, "127.0.0.1:6379 is this installation's Redis"],
    ['127.0.0.1', 8000, "127.0.0.1:8000 is this installation's front door (nginx)"],
    ['127.0.0.1', 8010, "127.0.0.1:8010 is this installation's capture service"],
    ['127.0.0.1', 8012, "127.0.0.1:8012 is this installation's api service"],
    ['127.0.0.1', 8113, "127.0.0.1:8113 is this installation's ingest service"],
    ['127.0.0.1', 8014, "127.0.0.1:8014 is this installation's worker service"],
    ['127.0.0.2', 8123, "127.0.0.2:8123 is this installation's ClickHouse (HTTP)"],
    ['0.0.0.0', 8123, "0.0.0.0:8123 is this installation's ClickHouse (HTTP)"],
    ['2130706433', 8123, "127.0.0.1:8123 is this installation's ClickHouse (HTTP)"],
    ['[::1]', 8123, "[::1]:8123 is this installation's ClickHouse (HTTP)"],
    ['[::ffff:127.0.0.1]', 8123, "[::ffff:7f00:1]:8123 is this installation's ClickHouse (HTTP)"],
    ['192.168.1.20', 8123, "192.168.1.20:8123 is this installation's ClickHouse (HTTP)"],
    ['localhost', 8123, "localhost resolves to 127.0.0.1; 127.0.0.1:8123 is this installation's ClickHouse (HTTP)"],
  ])("never reaches the stack's own stores and services, even where the allow list covers them: %s:%d", async (host, port, reason) => {
    const guard = makeUp(['127.0.0.0/8', '::1', '0.0.0.0/8', '192.168.0.0/16']);
    expect(await refusal(guard, host, port)).toBe(reason);
  });

  it("allows another database on the stack's Postgres where the allow list does, never the installation's own", async () => {
    const guard = makeUp();
    expect(await refusal(guard, '127.0.0.1', 5432, 'warehouse')).toBeNull();
    expect(await refusal(guard, '127.0.0.1', 5432, 'tributary')).toBe("127.0.0.1:5432 is this installation's Postgres database");
  });

  it('finds the stores of a compose deployment by the names the config gives them', async () => {
    const guard = makeUp(['172.16.0.0/12'], { CLICKHOUSE_URL: 'http://clickhouse:8123' });
    expect(await refusal(guard, '172.18.0.4', 8123)).toBe("172.18.0.4:8123 is this installation's ClickHouse (HTTP)");
    expect(await refusal(guard, '172.18.0.4', 9000)).toBe("172.18.0.4:9000 is this installation's ClickHouse (native protocol)");
    expect(await refusal(guard, '172.18.0.5', 8123)).toBeNull();
  });
});

describe('parseDestinationRule', () => {
  it.each([
    ['127.0.0.1:8333', { range: '127.0.0.1/32', port: 8333 }],
    ['[::1]:5432', { range: '::1/128', port: 5432 }],
    ['10.0.0.0/8', { range: '10.0.0.0/8', port: null }],
    ['10.0.0.0/8:5432', { range: '10.0.0.0/8', port: 5432 }],
    ['fd00::/8', { range: 'fd00::/8', port: null }],
    ['fd00::/8:5432', { range: 'fd00::/8', port: 5432 }],
    ['[fd00::/8]:5432', { range: 'fd00::/8', port: 5432 }],
    ['10.1.2.3', { range: '10.1.2.3/32', port: null }],
    ['minio.internal:9000', { name: 'minio.internal', port: 9000 }],
  ])('reads %s', (entry, expected) => {
    const rule = parseDestinationRule(entry);
    const target = 'name' in rule.target ? { name: rule.target.name } : { range: `${rule.target.range[0].toString()}/${rule.target.range[1]}` };
    expect({ ...target, port: rule.port }).toEqual(expected);
  });

  it.each(['minio.internal', '10.0.0.0/33', '127.0.0.1:0', '127.0.0.1:70000', 'a b:80', '[::1', 'http://x:80'])('refuses %s, naming it', (entry) => {
    expect(() => parseDestinationRule(entry)).toThrow(JSON.stringify(entry));
  });
});
