import { continents, countries, type TCountryCode } from 'countries-list';

/** One address's row in the GeoLite2-derived city database (ip-location-db's layout). */
export interface CityRecord {
  city?: string;
  country_code?: string;
  postcode?: string;
  timezone?: string;
}

/**
 * The `$geoip_*` person properties PostHog derives from a client's address (spec rule 3). The
 * database has country codes only; country and continent names come from the ISO tables of
 * `countries-list`. Properties the database does not know are left out rather than empty.
 */
export function geoipProperties(record: CityRecord | null): Record<string, string> {
  if (!record) return {};
  const code = record.country_code?.toUpperCase();
  const country = code && code in countries ? countries[code as TCountryCode] : undefined;
  const candidates: [string, string | undefined][] = [
    ['$geoip_city_name', record.city],
    ['$geoip_country_code', code],
    ['$geoip_country_name', country?.name],
    ['$geoip_continent_code', country?.continent],
    ['$geoip_continent_name', country ? continents[country.continent] : undefined],
    ['$geoip_postal_code', record.postcode],
    ['$geoip_time_zone', record.timezone],
  ];
  const properties: Record<string, string> = {};
  for (const [key, value] of candidates) if (value) properties[key] = value;
  return properties;
}
