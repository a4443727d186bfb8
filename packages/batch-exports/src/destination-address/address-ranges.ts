import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Cloud instance metadata services (AWS, GCP, Azure, OCI, DigitalOcean; ECS task metadata; AWS's
 * IPv6 endpoint; Alibaba; Oracle's older one). They hand out the machine's credentials, so no
 * allow-list entry opens them.
 */
export const METADATA_ADDRESSES: readonly string[] = ['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200', '192.0.0.192'];
/** Names of those services that some resolvers answer without asking DNS. */
export const METADATA_NAMES: readonly string[] = ['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'metadata.tencentyun.com'];

const RANGE_WORDS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT (100.64.0.0/10)',
  private: 'private',
  uniqueLocal: 'unique local (private IPv6)',
  reserved: 'reserved',
  teredo: 'a Teredo tunnel',
};

const metadata = new Set(METADATA_ADDRESSES.map((text) => ipaddr.parse(text).toNormalizedString()));

/** IPv4 inside an IPv6 address, where the IPv6 address is only a way of reaching it. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
  const range = address.range();
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT) and 64:ff9b::a.b.c.d (NAT64) carry it last.
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(p[6]!, p[7]!);
  if (range === 'rfc6052' && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return v4(p[6]!, p[7]!);
  // ::a.b.c.d, the deprecated IPv4-compatible form; :: and ::1 are classified as themselves.
  if (p.slice(0, 6).every((part) => part === 0) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  // 6to4 carries the router's IPv4 address right after 2002::/16.
  if (range === '6to4') return v4(p[1]!, p[2]!);
  return null;
}

export interface InternalRange {
  /** What the address is, in words: "loopback", "private", ... */
  why: string;
  /** A metadata service, which nothing may open. */
  metadata: boolean;
}

/**
 * Why an address is not someone else's server on the internet (loopback, private, link-local,
 * CGNAT, unspecified, multicast, broadcast, reserved, a metadata service, or such an IPv4 address
 * inside IPv6), or null when it is a public one.
 */
export function internalRange(address: IpAddress): InternalRange | null {
  if (metadata.has(address.toNormalizedString())) return { why: 'a cloud metadata service', metadata: true };
  if (address.kind() === 'ipv6') {
    const inner = embeddedIPv4(address as ipaddr.IPv6);
    if (inner) {
      const range = internalRange(inner);
      return range && { ...range, why: `${range.why} (IPv4 ${inner.toString()} inside IPv6)` };
    }
  }
  const range = address.range();
  if (range === 'unicast') return null;
  return { why: RANGE_WORDS[range] ?? `special-purpose (${range})`, metadata: false };
}

/** The address as the IPv4 address it maps to, where it is an IPv4-mapped IPv6 one: how allow and deny entries compare it. */
export function plainAddress(address: IpAddress): IpAddress {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}
