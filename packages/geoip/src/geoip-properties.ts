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
  const properties: Record<string, string> = {};
  const set = (key: string, value: string | undefined) => {
    if (value) properties[key] = value;
  };
  const code = record.country_code?.toUpperCase();
  const country = code && code in countries ? countries[code as TCountryCode] : undefined;
  set('$geoip_city_name', record.city);
  set('$geoip_country_code', code);
  set('$geoip_country_name', country?.name);
  set('$geoip_continent_code', country?.continent);
  set('$geoip_continent_name', country ? continents[country.continent] : undefined);
  set('$geoip_postal_code', record.postcode);
  set('$geoip_time_zone', record.timezone);
  return properties;
}
