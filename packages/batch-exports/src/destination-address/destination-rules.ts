import ipaddr from 'ipaddr.js';
import { plainAddress, type IpAddress } from './address-ranges.js';
import { parseHost } from './destination-host.js';

/** Addresses on a port (any port when null): a CIDR range, or what a name resolves to when a destination is checked. */
export interface DestinationRule {
  target: { range: [IpAddress, number] } | { name: string };
  port: number | null;
}

const PORT = '(\\d{1,5})';
const BRACKETED = new RegExp(`^\\[([^\\]]+)\\](?::${PORT})?$`);
const CIDR = new RegExp(`^([^/\\[\\]]+)/(\\d{1,3})(?::${PORT})?$`);
const HOST_PORT = new RegExp(`^([^:/\\[\\]]+):${PORT}$`);

function portOf(text: string | undefined, entry: string): number | null {
  if (text === undefined) return null;
  const port = Number(text);
  if (port < 1 || port > 65535) throw new Error(`${JSON.stringify(entry)} has no valid port`);
  return port;
}

function range(address: string, bits: string | undefined, entry: string): [IpAddress, number] {
  try {
    if (bits !== undefined) return ipaddr.parseCIDR(`${address}/${bits}`);
    const parsed = ipaddr.parse(address);
    return [parsed, parsed.kind() === 'ipv4' ? 32 : 128];
  } catch {
    throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR range`);
  }
}

/**
 * One entry of an allow list: `host:port` (a name, an IPv4 address, or `[IPv6]:port`), a CIDR
 * range (`10.0.0.0/8`, `fd00::/8`, `[fd00::/8]`) on any port, or a CIDR range on one port
 * (`10.0.0.0/8:5432`, `[fd00::/8]:5432`). A name must have a port: a name on every port would
 * open whatever else runs on the machines it resolves to.
 */
export function parseDestinationRule(entry: string): DestinationRule {
  const bracketed = BRACKETED.exec(entry);
  if (bracketed) {
    const [address, bits] = bracketed[1]!.split('/');
    return { target: { range: range(address!, bits, entry) }, port: portOf(bracketed[2], entry) };
  }
  const cidr = CIDR.exec(entry);
  if (cidr) return { target: { range: range(cidr[1]!, cidr[2], entry) }, port: portOf(cidr[3], entry) };
  const hostPort = HOST_PORT.exec(entry);
  if (hostPort) {
    let host: ReturnType<typeof parseHost>;
    try {
      host = parseHost(hostPort[1]!);
    } catch (error) {
      throw new Error(`${JSON.stringify(entry)}: ${(error as Error).message}`);
    }
    const target = 'name' in host ? { name: host.name } : { range: [host.address, host.address.kind() === 'ipv4' ? 32 : 128] as [IpAddress, number] };
    return { target, port: portOf(hostPort[2], entry) };
  }
  if (ipaddr.isValid(entry)) return { target: { range: range(entry, undefined, entry) }, port: null };
  throw new Error(`${JSON.stringify(entry)} is not host:port, a CIDR range, or CIDR:port`);
}

/** Whether the rule covers an address and port; `named` holds what the rules' names resolved to. */
export function ruleCovers(rule: DestinationRule, address: IpAddress, port: number, named: ReadonlyMap<string, IpAddress[]>): boolean {
  if (rule.port !== null && rule.port !== port) return false;
  const plain = plainAddress(address);
  if ('name' in rule.target) return (named.get(rule.target.name) ?? []).some((known) => plainAddress(known).toNormalizedString() === plain.toNormalizedString());
  const [network, bits] = rule.target.range;
  const base = plainAddress(network);
  if (base.kind() !== plain.kind()) return false;
  return plain.match(base.kind() === network.kind() ? [base, bits] : [base, bits - 96]);
}
