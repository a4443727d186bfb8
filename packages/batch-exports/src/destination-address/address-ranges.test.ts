import { internalRange } from './address-ranges.js';
import { parseHost } from './destination-host.js';

/** What a host, as a tenant may spell it, is: the words of its range, or null for a public address. */
const rangeOf = (spelling: string) => {
  const host = parseHost(spelling);
  if ('name' in host) throw new Error(`${spelling} is a name`);
  return internalRange(host.address)?.why ?? null;
};

describe('an export destination is someone else\'s server: every spelling of an internal address is refused', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['127.0.0.1.', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['017700000001', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0x7f.0x0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['0xc0.0xa8.1.1', 'private'],
    ['3232235777', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT (100.64.0.0/10)'],
    ['fd12:3456::1', 'unique local (private IPv6)'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'a Teredo tunnel'],
  ])('%s is %s', (spelling, why) => {
    expect(rangeOf(spelling)).toBe(why);
  });

  it.each([
    ['[::ffff:127.0.0.1]', 'loopback (IPv4 127.0.0.1 inside IPv6)'],
    ['::ffff:7f00:1', 'loopback (IPv4 127.0.0.1 inside IPv6)'],
    ['::7f00:1', 'loopback (IPv4 127.0.0.1 inside IPv6)'],
    ['::ffff:0:7f00:1', 'loopback (IPv4 127.0.0.1 inside IPv6)'],
    ['64:ff9b::127.0.0.1', 'loopback (IPv4 127.0.0.1 inside IPv6)'],
    ['64:ff9b::a00:1', 'private (IPv4 10.0.0.1 inside IPv6)'],
    ['2002:7f00:1::', 'loopback (IPv4 127.0.0.1 inside IPv6)'],
    ['2002:a9fe:a9fe::1', 'a cloud metadata service (IPv4 169.254.169.254 inside IPv6)'],
    ['::ffff:192.168.0.1', 'private (IPv4 192.168.0.1 inside IPv6)'],
  ])('IPv4 inside IPv6 is what the IPv4 address is: %s is %s', (spelling, why) => {
    expect(rangeOf(spelling)).toBe(why);
  });

  it.each(['169.254.169.254', '2852039166', '0xa9fea9fe', '169.254.170.2', 'fd00:ec2::254', '[::ffff:169.254.169.254]', '100.100.100.200', '192.0.0.192'])('%s is a cloud metadata service', (spelling) => {
    expect(rangeOf(spelling)).toMatch(/^a cloud metadata service/);
    expect(internalRange((parseHost(spelling) as { address: never }).address)?.metadata).toBe(true);
  });

  it.each(['8.8.8.8', '134744072', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1'])('%s is public', (spelling) => {
    expect(rangeOf(spelling)).toBeNull();
  });
});

describe('parseHost', () => {
  it('keeps a name, lower-cased and without its trailing dot', () => {
    expect(parseHost('Exports.Example.COM.')).toEqual({ name: 'exports.example.com' });
    expect(parseHost('localhost')).toEqual({ name: 'localhost' });
  });

  it.each(['metadata.google.internal', 'METADATA.GOOGLE.INTERNAL.', 'metadata', 'instance-data'])('refuses the metadata service name %s', (spelling) => {
    expect(() => parseHost(spelling)).toThrow(/is a cloud metadata service/);
  });

  it.each(['/var/run/postgresql', 'db1,db2', 'a b', '256.0.0.1', '1.2.3.4.5', '0x100000000', 'host:5432', '', 'exa..mple.com', '%31%32%37.0.0.1'])('refuses %j, which is neither a host name nor an IP address', (spelling) => {
    expect(() => parseHost(spelling)).toThrow(/is not (a valid IP address|a host name or IP address)/);
  });
});
