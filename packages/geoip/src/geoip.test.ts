import { geoipProperties, openGeoIp } from './index.js';

describe('geoip properties', () => {
  it('maps a city record to PostHog $geoip_* properties with country and continent names', () => {
    expect(geoipProperties({ city: 'Bracknell', country_code: 'GB', postcode: 'RG12', timezone: 'Europe/London' })).toEqual({
      $geoip_city_name: 'Bracknell',
      $geoip_country_code: 'GB',
      $geoip_country_name: 'United Kingdom',
      $geoip_continent_code: 'EU',
      $geoip_continent_name: 'Europe',
      $geoip_postal_code: 'RG12',
      $geoip_time_zone: 'Europe/London',
    });
  });

  it('leaves out what the record does not know', () => {
    expect(geoipProperties({ city: '', country_code: 'US', postcode: '', timezone: 'America/Chicago' })).toEqual({
      $geoip_country_code: 'US',
      $geoip_country_name: 'United States',
      $geoip_continent_code: 'NA',
      $geoip_continent_name: 'North America',
      $geoip_time_zone: 'America/Chicago',
    });
    expect(geoipProperties(null)).toEqual({});
  });
});

describe('the bundled database', () => {
  it('looks up IPv4, IPv4-mapped IPv6 and IPv6 addresses, and nothing for private or malformed ones', async () => {
    const geo = await openGeoIp();
    expect(geo.properties('81.2.69.142')).toMatchObject({ $geoip_country_code: 'GB', $geoip_continent_code: 'EU' });
    expect(geo.properties('::ffff:81.2.69.142')).toMatchObject({ $geoip_country_code: 'GB' });
    expect(geo.properties('2001:4860:4860::8888')).toMatchObject({ $geoip_country_code: 'US' });
    expect(geo.properties('127.0.0.1')).toEqual({});
    expect(geo.properties('10.1.2.3')).toEqual({});
    expect(geo.properties('not an ip')).toEqual({});
    expect(geo.properties(undefined)).toEqual({});
  });

  it('answers an address it was asked before with the same object, not a second lookup', async () => {
    const geo = await openGeoIp();
    expect(geo.properties('81.2.69.142')).toBe(geo.properties('81.2.69.142'));
  });
});
