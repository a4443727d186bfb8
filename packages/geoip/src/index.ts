export { geoipProperties, type CityRecord } from './geoip-properties.js';
export { openGeoIp, type GeoIp } from './geoip-reader.js';
