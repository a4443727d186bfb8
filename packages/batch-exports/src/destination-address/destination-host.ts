import ipaddr from 'ipaddr.js';
import { METADATA_NAMES, type IpAddress } from './address-ranges.js';
import { DestinationRefused } from './destination-refused.js';

export type DestinationHost = { address: IpAddress } | { name: string };

const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const HOST_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);
// As the URL standard reads a host: a last label that is a number makes the whole an IPv4 address.
const NUMERIC_LAST_LABEL = /(?:^|\.)(?:0x[0-9a-f]*|[0-9]+)$/;

/**
 * A destination's host as written (a URL's host name, Postgres's `host`): an IP address in any
 * spelling a resolver takes for one (IPv6 with or without brackets; IPv4 as one to four decimal,
 * octal or hex parts, as inet_aton reads `2130706433`, `0177.0.0.1`, `0x7f.1` or `127.1`), or a DNS
 * name, lower-cased, without its trailing dot. Anything else (a Unix socket directory, which
 * Postgres clients would connect to, a list of hosts, spaces) is refused, as are the names of
 * cloud metadata services.
 */
export function parseHost(text: string): DestinationHost {
  let host = text.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  else if (host.endsWith('.') && !host.endsWith('..')) host = host.slice(0, -1);
  if (ipaddr.IPv6.isValid(host)) return { address: ipaddr.IPv6.parse(host) };
  if (ipaddr.IPv4.isValid(host)) return { address: ipaddr.IPv4.parse(host) };
  if (NUMERIC_LAST_LABEL.test(host)) throw new DestinationRefused(`${JSON.stringify(text)} is not a valid IP address`);
  if (!HOST_NAME.test(host)) throw new DestinationRefused(`${JSON.stringify(text)} is not a host name or IP address`);
  if (METADATA_NAMES.includes(host)) throw new DestinationRefused(`${host} is a cloud metadata service`);
  return { name: host };
}
